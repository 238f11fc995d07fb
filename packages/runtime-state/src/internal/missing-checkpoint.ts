import { shellWord } from './shell-word.js';
/**
 * What every provider says when `location` holds no checkpoint `id`: the command that lists that
 * location's ids, named with the location (without it, `crewline checkpoint list` lists the default
 * location, not the one asked about).
 */
export function missingCheckpointMessage(id: string, location: string): string {
  return `no checkpoint "${id}" in ${location}; run \`crewline checkpoint list ${shellWord(location)}\` to see its ids`;
}
