import type { CrewlineError } from '@crewline/events';

/**
 * The command line's own words for a library error whose message tells a program what to change
 * (`point SqliteProvider at ...`): the library marks such an error with a detail, and the CLI says
 * what a user of the command does instead. Undefined for every other error: its message stands.
 */
export function cliWordsFor(error: CrewlineError): string | undefined {
  const notADatabase = error.details?.notADatabase;
  if (typeof notADatabase === 'string') {
    return `"${notADatabase}" is not a SQLite database, or its header is damaged; restore it from a backup if it held checkpoints, or pass a directory of JSON checkpoints, another .db file or a URL`;
  }
  return undefined;
}
