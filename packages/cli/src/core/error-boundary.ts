import type { CrewlineError, CrewlineErrorCode } from '@crewline/events';
import type { TextSink } from './cli-context.js';
import { cliWordsFor } from './cli-words.js';
import { debugEnabled } from './debug.js';
import { printable } from './format.js';

// The same brand `CrewlineError.isInstance` checks. Checked here without importing
// @crewline/events, so `crewline --help` and `--version` load none of the library.
const crewlineErrorBrand = Symbol.for('crewline.error.v1');

/** True for an error thrown by any crewline package (any copy of it). */
export function isCrewlineError(value: unknown): value is CrewlineError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[crewlineErrorBrand] === true
  );
}

/** Process exit codes of `crewline`, documented in the README and `crewline --help`. */
export const exitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  unreadable: 4,
  providerMissing: 5,
  notRebuildable: 6,
  /** Storage that cannot be reached (a Postgres server down): nothing is wrong with a checkpoint; try again. */
  unreachable: 7,
  internal: 70,
  interrupted: 130,
} as const;

const codeExits: Partial<Record<CrewlineErrorCode, number>> = {
  invalid_argument: exitCodes.usage,
  invalid_name: exitCodes.usage,
  not_found: exitCodes.notFound,
  ambiguous_reference: exitCodes.notFound,
  corrupt_checkpoint: exitCodes.unreadable,
  unsupported_version: exitCodes.unreadable,
  too_large: exitCodes.unreadable,
  read_failed: exitCodes.unreadable,
  provider_unavailable: exitCodes.providerMissing,
  not_rebuildable: exitCodes.notRebuildable,
  aborted: exitCodes.interrupted,
};

/**
 * The exit code for a known crewline error. A server that cannot be reached is marked by whoever
 * failed to reach it (`details.unreachable`, the Postgres provider and the run queue): its code
 * (`read_failed`, `write_failed`) would otherwise say "unreadable checkpoint" (4), and a script
 * should tell a damaged checkpoint, which stays damaged, from a server it can wait for.
 */
export function exitCodeFor(error: CrewlineError): number {
  if (error.details?.unreachable === true) return exitCodes.unreachable;
  // A .db location SQLite cannot read as a database is a damaged store, not a mistake in the call.
  if (typeof error.details?.notADatabase === 'string') return exitCodes.unreadable;
  // A Postgres URL naming a database the server does not have: a location that does not exist.
  if (error.details?.missingDatabase === true) return exitCodes.notFound;
  return codeExits[error.code] ?? exitCodes.failed;
}

/** A crewline error's message without the `[component] ` prefix, which means nothing to a CLI user. */
export function describeKnownError(error: CrewlineError): string {
  // Causes quoted inside a message (a compiler error in crewline.config.ts) may span lines.
  const message = cliWordsFor(error) ?? error.message.replace(/^\[[^\]]+\]\s*/, '');
  return message.replace(/\s*\n\s*/g, ' ');
}

function stackOf(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * The one error boundary of the CLI. A known crewline error becomes one line on stderr
 * (`crewline: <what is wrong and what to do>`) and its exit code; anything else is a bug report
 * with the stack (70). `CREWLINE_DEBUG=1` adds the stack to known errors too.
 */
export async function withErrorBoundary(
  body: () => Promise<number>,
  stderr: TextSink,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return reportError(error, stderr, env);
  }
}

/** Writes the report for `error` and returns the exit code (used by the boundary and the TUI). */
function reportError(
  error: unknown,
  stderr: TextSink,
  env: Readonly<Record<string, string | undefined>> = {},
): number {
  const debug = debugEnabled(env);
  if (isCrewlineError(error)) {
    // A message may quote what a checkpoint holds: its control characters are shown, not acted on.
    stderr.write(`crewline: ${printable(describeKnownError(error))}\n`);
    if (debug) stderr.write(`${printable(stackOf(error))}\n`);
    return exitCodeFor(error);
  }
  const lines = stackOf(error).split('\n');
  stderr.write(
    printable(
      `crewline: unexpected error - this is a bug in crewline or a plugin; please report it with these lines:\n${lines
        .slice(0, debug ? undefined : 12)
        .join('\n')}\n`,
    ),
  );
  return exitCodes.internal;
}
