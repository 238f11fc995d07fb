import { shellWord } from './shell-word.js';
/**
 * What every provider says when `location` holds no checkpoint `id`: the command that lists that
 * location's ids, named with the location (without it, `crewline checkpoint list` lists the default
 * location, not the one asked about). `command` names the CLI: the CLI says it as it was run
 * (`npx crewline`), where a provider cannot know.
 */
export function missingCheckpointMessage(id: string, location: string, command = 'crewline'): string {
  return `no checkpoint "${id}" in ${location}; run \`${command} checkpoint list ${shellWord(location)}\` to see its ids`;
}
