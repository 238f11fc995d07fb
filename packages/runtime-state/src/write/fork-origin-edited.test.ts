// A restore may edit the checkpoint's document before the run is rebuilt from it (the runtime's
// `taskOutputs`, the CLI's `--set-output`). The fork stores its origin again (ForkOrigin): that copy
// must be the checkpoint as stored, given as `origin`, never the edited document under its id.
import { EventBus, TaskCompletedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CheckpointDocument } from '../document.js';
import { readDocument } from '../reference.js';
import { RuntimeState } from '../runtime-state.js';
import { FakeCrew } from '../test-support/fake-crew.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';

/** A run of two tasks, each checkpointed; the first checkpoint is returned. */
function originalRun(provider: InMemoryProvider) {
  const crew = new FakeCrew(4);
  const state = new RuntimeState({ provider, location: 'mem', entities: [crew], bus: new EventBus() });
  const written = [0, 1].map((step) => {
    crew.outputs[step] = `output ${step}`;
    state.recordEvent(new TaskCompletedEvent({ description: `task ${step}`, output: `output ${step}` }));
    return state.writeCheckpointSync();
  });
  return written[0]!;
}

/** `document` with its first entity's data changed, as an edit before a restore changes it. */
function edited(document: CheckpointDocument): CheckpointDocument {
  const copy = structuredClone(document);
  copy.entities[0]!.data = { ...copy.entities[0]!.data, edited: 'EDITED OUTPUT' };
  return copy;
}

describe('a fork restored from an edited document', () => {
  it('stores its origin as stored, in a location that did not hold it', async () => {
    const source = new InMemoryProvider();
    const origin = originalRun(source);
    const stored = await readDocument(source, 'mem', origin.id);
    const destination = new InMemoryProvider();
    const fork = RuntimeState.fromDocument(edited(stored), {
      origin: stored,
      provider: destination,
      location: 'elsewhere',
      entities: [new FakeCrew(4)],
      bus: new EventBus(),
    });
    fork.fork('experiment');
    const first = fork.writeCheckpointSync();
    expect(first.parentId).toBe(origin.id);
    expect(await readDocument(destination, 'elsewhere', origin.id)).toEqual(stored);
  });

  it('refuses an origin that is not the checkpoint restored', async () => {
    const provider = new InMemoryProvider();
    originalRun(provider);
    const [first, second] = await provider.list('mem');
    const document = await readDocument(provider, 'mem', first!.id);
    const other = await readDocument(provider, 'mem', second!.id);
    expect(() => RuntimeState.fromDocument(document, { origin: other, provider })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
