import { type ParseArgsConfig, parseArgs } from 'node:util';
import { nearestName } from '@crewline/runtime-state/internal';
import { usageError } from './cli-error.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
type Parsed<T extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

export interface ParsedArguments<T extends OptionsConfig> {
  values: Parsed<T>['values'];
  positionals: string[];
}

/**
 * `node:util` parseArgs, strict, with its errors turned into one-line usage errors that say how to
 * get help for `command`; an unknown long option names the command's option it is closest to.
 * `cli` is how the CLI was run, for the help command they name (`commandName`). Default `crewline`.
 */
export function parseCommandArguments<const T extends OptionsConfig>(
  command: string,
  args: readonly string[],
  options: T,
  maxPositionals: number,
  cli = 'crewline',
): ParsedArguments<T> {
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? (error.message.split('. ')[0] ?? error.message) : String(error);
    const suggestion = closestOption(error, Object.keys(options));
    throw usageError(
      `${message.replace(/\.$/, '')}${suggestion ? ` (did you mean --${suggestion}?)` : ''}; run \`${cli} ${command} --help\``,
    );
  }
  if (parsed.positionals.length > maxPositionals) {
    throw usageError(
      `unexpected argument "${parsed.positionals[maxPositionals]}"; run \`${cli} ${command} --help\``,
    );
  }
  // An empty --location is most often a script's empty variable: taken as "none given", a resume
  // continued (and wrote into) the default location's newest run (review).
  const location = (parsed.values as { location?: unknown }).location;
  if (typeof location === 'string' && location.trim() === '') {
    throw usageError(
      `--location is empty; give a directory, a .db file or a postgres:// URL, or leave it out for the default; run \`${cli} ${command} --help\``,
    );
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/**
 * The option of `names` an unknown long option (`--locaton`, `--locaton=x`) was probably meant to be
 * (at most two edits away): parseArgs says only that it is unknown, and the right spelling is what
 * the user needs. Short options (`-x`) are one letter, too short for a guess to be right.
 */
function closestOption(error: unknown, names: readonly string[]): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  const given = /Unknown option '--([^'=]+)/.exec((error as Error).message)?.[1];
  return given === undefined ? undefined : nearestName(given, names);
}

/** A whole-number option of at least `minimum` (default 0), or a usage error naming the option. */
export function parseCount(option: string, value: string, minimum = 0): number {
  if (!/^\d+$/.test(value) || Number(value) < minimum) {
    throw usageError(
      `${option} must be a whole number${minimum > 0 ? ` of at least ${minimum}` : ''}, got "${value}"`,
    );
  }
  return Number(value);
}

/**
 * `key=value` pairs of a repeatable option into an object. `key:=json` parses the value as JSON
 * (numbers, booleans, objects); plain `key=value` is always a string.
 */
export function parseAssignments(
  option: string,
  pairs: readonly string[] | undefined,
): Record<string, unknown> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const result: Record<string, unknown> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw usageError(`${option} "${pair}" must look like key=value (or key:=<json>)`);
    const asJson = pair[equals - 1] === ':';
    const key = pair.slice(0, asJson ? equals - 1 : equals);
    const text = pair.slice(equals + 1);
    if (key === '' || key === '__proto__') throw usageError(`${option} "${pair}" has no usable key`);
    let value: unknown = text;
    if (asJson) {
      try {
        value = JSON.parse(text);
      } catch {
        throw usageError(`${option} ${key}:= expects JSON, got "${text}"; quote strings or use ${key}=text`);
      }
    }
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return result;
}
