// A fork's origin, stored again beside the fork's first checkpoint (ForkOrigin), is usually stored
// already: its writes say so (`mayBeStoredAlready`), so that a provider whose store reports every
// refused duplicate (Postgres' server log) looks the id up first. No other write says so: a provider
// may pay a look-up for each one that does.
import { EventBus, TaskCompletedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from '../provider.js';
import { readDocument } from '../reference.js';
import { RuntimeState } from '../runtime-state.js';
import { FakeCrew } from '../test-support/fake-crew.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';

/**
 * The in-memory provider, remembering each write it was handed, in order (its `write` goes through
 * `writeSync`, so both ways are seen here once).
 */
class WatchedProvider extends InMemoryProvider {
  readonly handed: CheckpointWrite[] = [];

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    this.handed.push(checkpoint);
    return super.writeSync(location, checkpoint);
  }
}

function runOf(provider: InMemoryProvider, state?: RuntimeState) {
  const crew = new FakeCrew(8);
  const run = state ?? new RuntimeState({ provider, location: 'mem', entities: [crew], bus: new EventBus() });
  let step = 0;
  const record = () => {
    run.recordEvent(new TaskCompletedEvent({ description: `task ${step}`, output: `output ${step}` }));
    step += 1;
  };
  return { state: run, record };
}

/** Restores `origin` and forks it; nothing is written yet. */
async function forkOf(provider: InMemoryProvider, origin: StoredCheckpoint): Promise<RuntimeState> {
  const document = await readDocument(provider, 'mem', origin.id);
  const fork = RuntimeState.fromDocument(document, {
    provider,
    location: 'mem',
    entities: [new FakeCrew(8)],
    bus: new EventBus(),
  });
  fork.fork('experiment');
  return fork;
}

/** What each write handed over says: its id and whether it may be stored already. */
function flags(handed: readonly CheckpointWrite[]): [string, boolean][] {
  return handed.map((write) => [write.metadata.id, write.mayBeStoredAlready === true]);
}

describe("a fork's origin stored again", () => {
  it('is handed over as maybe stored already, before and after the first synchronous write, and nothing else is', async () => {
    const provider = new WatchedProvider();
    const original = runOf(provider);
    original.record();
    const origin = original.state.writeCheckpointSync();
    original.record();
    original.state.writeCheckpointSync();
    const fork = runOf(provider, await forkOf(provider, origin));
    fork.record();
    const first = fork.state.writeCheckpointSync();
    fork.record();
    const second = fork.state.writeCheckpointSync();
    expect(flags(provider.handed.slice(2))).toEqual([
      [origin.id, true],
      [first.id, false],
      [origin.id, true],
      [second.id, false],
    ]);
    expect(flags(provider.handed.slice(0, 2)).map(([, flag]) => flag)).toEqual([false, false]);
  });

  it('is handed over as maybe stored already around the first background write too', async () => {
    const provider = new WatchedProvider();
    const original = runOf(provider);
    original.record();
    const origin = await original.state.writeCheckpoint();
    const fork = runOf(provider, await forkOf(provider, origin));
    fork.record();
    const first = await fork.state.writeCheckpoint();
    fork.record();
    const second = await fork.state.writeCheckpoint();
    await fork.state.settle();
    expect(flags(provider.handed)).toEqual([
      [origin.id, false],
      [origin.id, true],
      [first.id, false],
      [origin.id, true],
      [second.id, false],
    ]);
  });
});
