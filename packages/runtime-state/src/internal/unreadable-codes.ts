import type { CrewlineErrorCode } from '@crewline/events';

/**
 * The codes of a checkpoint that is stored but cannot be read (damaged, too large, from a newer
 * crewline, a failed read): what tells "unreadable" (the CLI's exit code 4) from "not there".
 */
export const unreadableCodes: ReadonlySet<CrewlineErrorCode> = new Set([
  'corrupt_checkpoint',
  'unsupported_version',
  'too_large',
  'read_failed',
]);
