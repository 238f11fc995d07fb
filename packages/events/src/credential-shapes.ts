// Credentials found by their shape alone: API keys, private keys, URL and Oracle JDBC passwords
// (split out of secret-patterns.ts).
import { REDACTED } from './redacted.js';
import { isWordCharacter } from './text-characters.js';
import { wholeTemplate } from './value-templates.js';

// Credentials recognizable by their shape. Deliberately broad: a false positive costs a redacted
// string, a false negative leaks a key. Measured on prose, three scans are cheaper than one: V8 tries
// each position against the alternatives of one first character at a time when they are grouped by
// it, a long alternation gets slower with every alternative added, and the PEM header is found by a
// plain substring search. A shape must start a word, but the expressions leave that out (see
// `replaceShapes`): a leading `\b` keeps V8 from skipping ahead to the characters a shape starts
// with, and made the scan of 2 KB of prose five times slower.
const shapesStartingLowerCase = new RegExp(
  `(?:${[
    // Anthropic; OpenAI and compatible; Stripe secret keys
    /s(?:k-ant-[A-Za-z0-9_-]{8,}|k-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}|k_(?:live|test)_[A-Za-z0-9]{16,})/,
    // GitHub tokens; GitLab
    /g(?:h[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,}|lpat-[A-Za-z0-9_-]{20,})/,
    /xox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
    /hf_[A-Za-z0-9]{20,}/, // Hugging Face
    /[rp]k_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe restricted and publishable keys
    /npm_[A-Za-z0-9]{30,}/, // npm
    /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, // JWT
  ]
    .map((shape) => shape.source)
    .join('|')})`,
  'g',
);

const shapesStartingUpperCase = new RegExp(
  `(?:${[
    /A(?:KIA[0-9A-Z]{16}\b|Iza[0-9A-Za-z_-]{30,})/, // AWS access key id; Google
    /B(?:earer|asic)\s+[A-Za-z0-9._~+/=-]{16,}/, // authorization header values
  ]
    .map((shape) => shape.source)
    .join('|')})`,
  'g',
);

const privateKey = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;

// The password of a URL's userinfo (`postgres://app:…@db`). Captures what precedes it instead of a
// lookbehind, which V8 tries at every position of the text.
const urlPassword = /(:\/\/[^\s:/@]{1,128}:)[^\s@/]{3,}@/g;

// The password of Oracle's JDBC address (`jdbc:oracle:thin:scott/…@db:1521/ORCL`, quoted when it holds
// `@` or `/`), which has no `://`. Looked for only in a text that holds `:oracle:` (JDBC's own case).
// Every part is bounded: unbounded, each `jdbc:oracle:thin:u/` of a long text without `@` read to its
// end (200 KB took 3.3 s).
const oraclePassword = /(jdbc:oracle:[A-Za-z0-9]{1,32}:[^\s/@:"]{1,128}\/)("[^"\n]{0,256}"|[^\s@"]{1,256})@/g;

/**
 * `text` with every match of `shapes` (a global expression) that starts a word replaced by
 * `[REDACTED]`: what `text.replace(/\b(?:…)/g, …)` gives. A match inside a word is passed over and
 * the search goes on from its second character, so a shape starting later inside it is still found.
 */
function replaceShapes(text: string, shapes: RegExp): string {
  shapes.lastIndex = 0;
  let result = '';
  let copied = 0;
  for (let match = shapes.exec(text); match !== null; match = shapes.exec(text)) {
    const start = match.index;
    if (start > 0 && isWordCharacter(text.charCodeAt(start - 1))) {
      shapes.lastIndex = start + 1;
      continue;
    }
    result += text.slice(copied, start) + REDACTED;
    copied = start + match[0].length;
  }
  return copied === 0 ? text : result + text.slice(copied);
}

/** The Oracle password of a match of `oraclePassword` replaced, unless it is a template, unquoted and whole. */
function replaceOraclePassword(match: string, before: string, password: string): string {
  return !password.startsWith('"') && wholeTemplate.test(password) ? match : `${before}${REDACTED}@`;
}

/** `text` with the credentials found by their shape replaced: keys, private keys, URL and Oracle passwords. */
export function redactShapes(text: string): string {
  let result = replaceShapes(replaceShapes(text, shapesStartingLowerCase), shapesStartingUpperCase);
  if (result.includes('-----BEGIN')) result = result.replace(privateKey, REDACTED);
  if (result.includes('://')) result = result.replace(urlPassword, `$1${REDACTED}@`);
  if (result.includes(':oracle:')) result = result.replace(oraclePassword, replaceOraclePassword);
  return result;
}
