// Module hooks (node:module `register`) for redaction-share.ts: after tsx has compiled them, the
// redaction entry points of @crewline/runtime-state (`redactSecrets`, `redactAndSettle`, through
// which every value a checkpoint holds is redacted) and the pattern scan of @crewline/events
// (`scanText`, run once per string not seen before) are wrapped with timers and counters kept on
// `globalThis[Symbol.for('crewline.bench.redaction')]`. Nothing of the product changes: only the
// bench process that registers these hooks sees the wrapped functions.
const wrapped = [
  { file: '/packages/runtime-state/src/redaction.ts', names: ['redactSecrets', 'redactAndSettle'] },
  { file: '/packages/events/src/secret-patterns.ts', names: ['scanText'] },
];

const prelude = `const __redactionTally = (globalThis[Symbol.for('crewline.bench.redaction')] ??= { depth: 0, ms: 0, calls: 0, scans: 0, scannedCharacters: 0 });\n`;

function wrapper(name) {
  if (name === 'scanText') {
    return `function scanText(text) { __redactionTally.scans += 1; __redactionTally.scannedCharacters += text.length; return scanText__measured(text); }\n`;
  }
  // Only the outermost call is timed: redactSecrets may run inside redactAndSettle.
  return `function ${name}(...parameters) {
  __redactionTally.calls += 1;
  if (__redactionTally.depth > 0) return ${name}__measured(...parameters);
  __redactionTally.depth += 1;
  const started = performance.now();
  try { return ${name}__measured(...parameters); }
  finally { __redactionTally.ms += performance.now() - started; __redactionTally.depth -= 1; }
}\n`;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const target = wrapped.find((entry) => url.split('?')[0].endsWith(entry.file));
  if (target === undefined || result.source === undefined) return result;
  let source = String(result.source);
  for (const name of target.names) {
    const declaration = new RegExp(`(export )?function ${name}\\(`);
    const found = declaration.exec(source);
    if (found === null) throw new Error(`redaction-timing-hooks: no function ${name} in ${url}`);
    source = source.replace(declaration, `function ${name}__measured(`);
    // An exported declaration: the wrapper takes over the export.
    source += `\n${found[1] ?? ''}${wrapper(name)}`;
  }
  return { ...result, source: prelude + source };
}
