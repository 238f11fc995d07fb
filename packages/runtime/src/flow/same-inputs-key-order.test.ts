// A finished persisted flow kicked off again by id with inputs its state holds already writes
// nothing (finished-flow-new-inputs.test.ts), whatever order the keys of the saved state and of the
// inputs come in: equal values in another key order are no news to store, and a checkpoint of them
// would push an older one out under `maxCheckpoints`. A changed value is still written.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-same-inputs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let directoryCounter = 0;
function freshLocation(): string {
  directoryCounter += 1;
  return join(root, `states-${directoryCounter}`);
}

const jsonProvider = new JsonProvider();
const triggersAt = async (location: string) =>
  (await jsonProvider.list(jsonProvider.resolveLocation(location))).map((checkpoint) => checkpoint.trigger);

interface DraftState {
  topic: string;
  settings: { tone: string; length: number };
  draft: string;
}

/** Its method sets `topic` again after deleting it: the saved state has its keys in another order. */
function draftFlow(location: string) {
  @persist({ location })
  class Draft extends Flow<DraftState> {
    initialState = { topic: '', settings: { tone: 'plain', length: 1 }, draft: '' };
    @start() write() {
      const topic = this.state.topic;
      delete (this.state as Partial<DraftState>).topic;
      this.state.topic = topic;
      this.state.draft = `${this.state.settings.tone} draft on ${topic}`;
      return this.state.draft;
    }
  }
  return Draft;
}

async function finishedDraft(location: string) {
  const Draft = draftFlow(location);
  const kickoff = (inputs: Record<string, unknown>) =>
    new Draft({ bus: new EventBus() }).kickoff({ inputs: { id: 'draft-1', ...inputs } });
  await kickoff({ topic: 'tides', settings: { tone: 'calm', length: 3 } });
  return kickoff;
}

describe('a finished persisted flow kicked off again by id with the inputs it holds', () => {
  it('writes nothing when its saved state has its keys in another order', async () => {
    const location = freshLocation();
    const kickoff = await finishedDraft(location);
    const stored = await triggersAt(location);
    const again = await kickoff({ topic: 'tides' });
    expect(again.state).toMatchObject({ topic: 'tides', draft: 'calm draft on tides' });
    expect(again.checkpoint).toBeUndefined();
    expect(await triggersAt(location)).toEqual(stored);
  });

  it('writes nothing when an input object has its keys in another order', async () => {
    const location = freshLocation();
    const kickoff = await finishedDraft(location);
    const stored = await triggersAt(location);
    const again = await kickoff({ settings: { length: 3, tone: 'calm' } });
    expect(again.state.settings).toEqual({ tone: 'calm', length: 3 });
    expect(again.checkpoint).toBeUndefined();
    expect(await triggersAt(location)).toEqual(stored);
  });

  it('still writes its end once when a value changed, whatever the key order', async () => {
    const location = freshLocation();
    const kickoff = await finishedDraft(location);
    const stored = await triggersAt(location);
    const again = await kickoff({ settings: { length: 4, tone: 'calm' } });
    expect(again.state.settings).toEqual({ tone: 'calm', length: 4 });
    expect(again.checkpoint).toBeDefined();
    expect((await triggersAt(location)).slice(stored.length)).toEqual(['flow_finished']);

    // The change is what the next kickoff by id finds.
    const next = await kickoff({});
    expect(next.state.settings).toEqual({ tone: 'calm', length: 4 });
  });
});
