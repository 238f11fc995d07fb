// The markdown report of the fuzz suite: cases by class and outcome, failures by kind, and a
// replay command for each failing case shown.
import { cpus, loadavg } from 'node:os';
import type { CaseResult } from './case-result.js';

export interface SuiteClass {
  name: string;
  description: string;
}

export interface FuzzReportContext {
  command: string;
  seed: number;
  jsonClasses: readonly SuiteClass[];
  databaseClasses: readonly SuiteClass[];
  /** Checkpoint files and database the cases were made from. */
  seedFiles: number;
  seedDatabaseBytes: number;
  resumeShare: number;
  wallMs: { seeds: number; json: number; database: number; total: number };
  loadBefore: number;
  /** crewline log records emitted during the run, by level (counted, not printed). */
  logRecords: Record<string, number>;
  /** How many failing cases to list one by one. */
  failuresListed: number;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function tally(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([value, count]) => `${value} ${count}`)
    .join(', ');
}

/** Median and longest wall time of some cases. */
function milliseconds(results: readonly CaseResult[]): string {
  if (results.length === 0) return '-';
  const times = results.map((result) => result.wallMs).sort((a, b) => a - b);
  return `${times[Math.floor(times.length / 2)]!.toFixed(0)} / ${times.at(-1)!.toFixed(0)}`;
}

function classRows(
  results: readonly CaseResult[],
  classes: readonly SuiteClass[],
  withResumes: boolean,
): string[] {
  return classes.map(({ name }) => {
    const mine = results.filter((result) => result.mutation === name);
    const count = (outcome: CaseResult['outcome']) =>
      mine.filter((result) => result.outcome === outcome).length;
    const codes = tally(mine.flatMap((result) => (result.code !== undefined ? [result.code] : [])));
    const resumes = withResumes ? ` ${mine.filter((result) => result.resumed).length} |` : '';
    return `| ${name} | ${mine.length} | ${count('accepted')} | ${count('refused')} | ${count('failed')} | ${codes || '-'} |${resumes} ${milliseconds(mine)} |`;
  });
}

function totalRow(results: readonly CaseResult[], withResumes: boolean): string {
  const count = (outcome: CaseResult['outcome']) =>
    results.filter((result) => result.outcome === outcome).length;
  const resumes = withResumes ? ` **${results.filter((result) => result.resumed).length}** |` : '';
  return `| **all** | **${results.length}** | **${count('accepted')}** | **${count('refused')}** | **${count('failed')}** | |${resumes} ${milliseconds(results)} |`;
}

function summaryRow(suite: string, results: readonly CaseResult[], wallMs: number): string {
  const count = (outcome: CaseResult['outcome']) =>
    results.filter((result) => result.outcome === outcome).length;
  return `| ${suite} | ${results.length} | ${count('accepted')} | ${count('refused')} | ${count('failed')} | ${seconds(wallMs)} |`;
}

function failureKindRows(results: readonly CaseResult[]): string[] {
  const kinds = new Map<string, { cases: Set<string>; classes: Set<string> }>();
  for (const result of results) {
    for (const failure of result.failures) {
      const entry = kinds.get(failure.kind) ?? { cases: new Set(), classes: new Set() };
      entry.cases.add(`${result.suite}:${result.index}`);
      entry.classes.add(result.mutation);
      kinds.set(failure.kind, entry);
    }
  }
  return [...kinds].map(
    ([kind, entry]) => `| ${kind} | ${entry.cases.size} | ${[...entry.classes].join(', ')} |`,
  );
}

/** Text on one line: a list item of the report must not be broken by a message's own newlines. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ');
}

/** One line per failing case (the first `limit`), each with the command that replays it. */
function failureLines(results: readonly CaseResult[], context: FuzzReportContext): string[] {
  const failing = results.filter((result) => result.outcome === 'failed');
  // Spread the listed cases over the kinds of failure rather than listing the first class's dozens.
  const byKind = new Map<string, CaseResult[]>();
  for (const result of failing) {
    const kind = `${result.mutation}/${result.failures[0]!.kind}`;
    byKind.set(kind, [...(byKind.get(kind) ?? []), result]);
  }
  const listed: CaseResult[] = [];
  for (let round = 0; listed.length < Math.min(context.failuresListed, failing.length); round += 1) {
    for (const group of byKind.values())
      if (group[round] && listed.length < context.failuresListed) listed.push(group[round]!);
  }
  return listed.map((result) => {
    const failure = result.failures[0]!;
    const more = result.failures.length > 1 ? ` (and ${result.failures.length - 1} more)` : '';
    return `- ${result.suite} case ${result.index} (${result.mutation}): ${oneLine(result.detail)} — **${failure.kind}** in ${failure.operation}: ${oneLine(failure.message)}${more} — replay: \`pnpm --filter @crewline/bench bench:fuzz --seed ${context.seed} --case ${result.suite}:${result.index}\``;
  });
}

/** The whole report as markdown. */
export function renderFuzzReport(
  json: readonly CaseResult[],
  database: readonly CaseResult[],
  context: FuzzReportContext,
): string {
  const all = [...json, ...database];
  const failing = all.filter((result) => result.outcome === 'failed');
  const kindRows = failureKindRows(all);
  return [
    '# Fuzz suite: hostile checkpoint files and damaged databases',
    '',
    '```sh',
    context.command,
    '```',
    '',
    '| suite | cases | accepted | refused (typed error) | failed | wall time |',
    '| --- | --- | --- | --- | --- | --- |',
    summaryRow('hostile checkpoint files', json, context.wallMs.json),
    summaryRow('damaged SQLite databases', database, context.wallMs.database),
    '',
    `Seed ${context.seed}: every case is generated from it and its index alone, so \`--seed ${context.seed} --case json:N\` (or \`database:N\`) replays one case. The cases start from real checkpoints written by real runs of the crash trials' crew and flow (offline model, \`'*'\`): ${context.seedFiles} JSON checkpoint files and a ${(context.seedDatabaseBytes / 1024).toFixed(0)} KB SQLite database holding both runs, written afresh by each run of the suite.`,
    '',
    "Oracles, for every case: no exception other than a typed `CrewlineError` (`CrewlineError.isInstance`); no change to `Object.prototype`, `Array.prototype`, `Function.prototype` or `String.prototype` (own keys and values compared before and after); no file or directory left outside the location (the location lies four directories below the case's own directory, which is walked afterwards; the seed runs' deleted locations must not come back); the CLI (`crewline checkpoint info --json` and `list`, run in-process) never ends in its internal-error exit code 70. For damaged databases also: no write accepted into a database that fails `PRAGMA quick_check` (checked on a copy before the provider opens it), claims a newer `user_version` or another application; and a write accepted into a sound database leaves it passing `quick_check`.",
    '',
    '## Hostile checkpoint files',
    '',
    `Each mutated file is put where its run wrote it (\`<location>/main/<id>_p-<parent>.json\`; some traversal cases as a standalone \`saved.json\`) and read with \`loadCheckpoint(file)\` (the deciding operation: "accepted" means it loaded), \`loadCheckpoint(location)\`, \`JsonProvider.list\`, the CLI; a loaded checkpoint is restored (\`Crew.fromCheckpoint\` / \`Flow.fromCheckpoint\`), and ${(context.resumeShare * 100).toFixed(0)} % of the cases are resumed to the end when they load (\`continueFromCheckpoint\`, as \`crewline checkpoint resume\` does), so the resumed run writes.`,
    '',
    ...context.jsonClasses.map((entry) => `- \`${entry.name}\`: ${entry.description}`),
    '',
    '| class | cases | accepted (loaded) | refused (typed error) | failed | refusals by code | resumed to the end | ms per case (median / max) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...classRows(json, context.jsonClasses, true),
    totalRow(json, true),
    '',
    '## Damaged SQLite databases',
    '',
    'Each damaged copy of the database is opened through `SqliteProvider`: `list`, `latest`, up to three `read`s, `loadCheckpoint(location)`, then a fresh checkpoint written (`writeSync` or `write`, the deciding operation: "accepted" means the write was stored), `close`, and `crewline checkpoint list`.',
    '',
    ...context.databaseClasses.map((entry) => `- \`${entry.name}\`: ${entry.description}`),
    '',
    '| class | cases | write accepted | write refused (typed error) | failed | refusals by code | ms per case (median / max) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...classRows(database, context.databaseClasses, false),
    totalRow(database, false),
    '',
    '## Failures',
    '',
    ...(failing.length === 0
      ? ['No case failed.']
      : [
          `${failing.length} of ${all.length} cases failed. By kind (a case can fail in more than one way):`,
          '',
          '| kind | cases | classes |',
          '| --- | --- | --- |',
          ...kindRows,
          '',
          `Failing cases${failing.length > context.failuresListed ? ` (${context.failuresListed} of ${failing.length}, spread over the kinds)` : ''}:`,
          '',
          ...failureLines(all, context),
        ]),
    '',
    `crewline logged ${context.logRecords.warn ?? 0} warnings and ${context.logRecords.error ?? 0} errors during the run (readers skipping or refusing hostile files say so; counted, not printed).`,
    '',
    `Wall time: ${seconds(context.wallMs.total)} (seed runs ${seconds(context.wallMs.seeds)}, checkpoint files ${seconds(context.wallMs.json)}, databases ${seconds(context.wallMs.database)}). Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; 1-minute load average ${context.loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after.`,
  ].join('\n');
}
