import type { StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { writeFakeFork, writeFakeRun } from './fake-crew.js';

export interface SampleCheckpoints {
  provider: InMemoryProvider;
  location: string;
  main: StoredCheckpoint[];
  fork: StoredCheckpoint;
  forkOfFork: StoredCheckpoint;
  orphan: StoredCheckpoint;
  other: StoredCheckpoint[];
  all: StoredCheckpoint[];
}

/**
 * Checkpoints of two crews in memory: `Research` with a main branch of 6, a fork `experiment` from
 * its 3rd checkpoint, a fork of that fork, and a fork whose parent was deleted (orphan); `Writing`
 * with 2 checkpoints.
 */
export async function sampleCheckpoints(): Promise<SampleCheckpoints> {
  const provider = new InMemoryProvider();
  const location = 'memory-location';
  const main = await writeFakeRun({ provider, location, taskCount: 3 });
  const fork = await writeFakeFork(provider, location, main[2]!, 'experiment');
  const forkOfFork = await writeFakeFork(provider, location, fork, 'experiment/deeper');
  const doomed = await writeFakeFork(provider, location, main[1]!, 'doomed');
  const orphan = await writeFakeFork(provider, location, doomed, 'orphan');
  await provider.delete(location, doomed.id);
  const other = await writeFakeRun({ provider, location, crewName: 'Writing', taskCount: 1 });
  return { provider, location, main, fork, forkOfFork, orphan, other, all: await provider.list(location) };
}
