import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';

// The provider's methods hand their work to one module each (see json-provider.ts). A method that
// only returns the module's promise adds no promise of its own: an `async` wrapper around it would
// settle two microtask turns later than the module's promise, and every write-and-read the runtime
// waits on would pay them (review RB-1).

/** Microtask turns that pass before the promise `start` returns settles (either way). */
async function turnsUntilSettled(start: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let settled = false;
  const counting = (async () => {
    for (let index = 0; index < 20 && !settled; index += 1) {
      turns += 1;
      await null;
    }
  })();
  await start().then(
    () => undefined,
    () => undefined,
  );
  settled = true;
  await counting;
  return turns;
}

/** Each delegating method called with an argument refused before any I/O. */
function refusedCalls(provider: JsonProvider): Record<string, () => Promise<unknown>> {
  const lease = { lineageId: 'lineage', owner: 'owner' };
  return {
    read: () => provider.read('/tmp', '../escape'),
    listWithUnreadable: () => provider.listWithUnreadable(''),
    latest: () => provider.latest(''),
    prune: () => provider.prune('/tmp', { keep: -1 }),
    claimLease: () => provider.claimLease('', { ...lease, checkpointId: null, holder: 'test', ttlMs: 1 }),
    renewLease: () => provider.renewLease('', lease, 1),
    delete: () => provider.delete('/tmp', '../escape'),
  };
}

describe('JsonProvider methods that delegate to a module', () => {
  it('settle as soon as a method that returns the module promise as it is (write)', async () => {
    const provider = new JsonProvider();
    const direct = await turnsUntilSettled(() => provider.write('', { metadata: { id: 'bad' } } as never));
    const turns: Record<string, number> = {};
    for (const [name, call] of Object.entries(refusedCalls(provider))) {
      turns[name] = await turnsUntilSettled(call);
    }
    expect(turns).toEqual(Object.fromEntries(Object.keys(turns).map((name) => [name, direct])));
  });

  it('refuse a bad argument with a rejected promise, never a throw', async () => {
    const provider = new JsonProvider();
    for (const [name, call] of Object.entries(refusedCalls(provider))) {
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = call();
      }, name).not.toThrow();
      const error = await promise!.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(CrewlineError.isInstance(error), name).toBe(true);
    }
  });
});
