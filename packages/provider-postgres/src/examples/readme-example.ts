// The code of this package's README.md; readme-example.test.ts runs it against the test server.
// #region example
import { PostgresProvider } from '@crewline/provider-postgres';
import { type CheckpointConfigInput, parseCheckpointConfig } from '@crewline/runtime-state';

// #endregion example
/** Runs the README's example against the server at `url`; returns what it printed. */
export async function readmeExample(url: string): Promise<string[]> {
  const printed: string[] = [];
  const console = { log: (line: string) => printed.push(line) };
  // #region example
  // The `checkpoint` option of a Crew, Flow or Agent (url: postgres://user:password@host:5432/database):
  const provider = new PostgresProvider({ schema: 'crewline' });
  const checkpoint: CheckpointConfigInput = { location: url, provider, onEvents: ['*'] };
  parseCheckpointConfig(checkpoint);

  // The provider on its own: locations and references never carry the password.
  const location = provider.resolveLocation(url); // postgres://user@host:5432/database?schema=crewline
  const newest = await provider.list(location, { limit: 20 }); // one page, oldest first
  const older = await provider.list(location, { limit: 20, before: newest[0]?.id });
  console.log(`${newest.length + older.length} checkpoints listed from ${location}`);
  await provider.close();
  // #endregion example
  return printed;
}
