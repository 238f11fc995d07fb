import { shellWord } from '@crewline/runtime-state/internal';
import { displayPath } from './location.js';

/**
 * ` --location <where>` for a hint that names a command, when the user gave a location (flag or
 * positional), shell-quoted, a connection string's password hidden; empty otherwise (the command
 * then finds the same default location). A hint without it, followed, looked in ./.checkpoints.
 */
export function locationOption(given: string | undefined, cwd: string): string {
  return given === undefined ? '' : ` --location ${shellWord(displayPath(given, cwd))}`;
}
