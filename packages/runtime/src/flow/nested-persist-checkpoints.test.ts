// A @persist flow kicked off in a method of a flow that checkpoints on '*' runs under that
// inherited setting: its events are checkpointed by the run already, so its own saves (after a
// persisted method, at a finished end its new inputs changed) must not write the same checkpoint a
// second time. Two copies are storage for nothing, and under `maxCheckpoints` they push older
// checkpoints out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, describe, expect, it } from 'vitest';
import type { FlowResult } from './flow-types.js';
import { Flow, listen, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-nested-persist-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let directoryCounter = 0;
function freshLocation(): string {
  directoryCounter += 1;
  return join(root, `states-${directoryCounter}`);
}

const jsonProvider = new JsonProvider();
const checkpointsAt = (location: string) => jsonProvider.list(jsonProvider.resolveLocation(location));

/** How many checkpoints each trigger wrote. */
function countByTrigger(checkpoints: readonly StoredCheckpoint[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const checkpoint of checkpoints) counts[checkpoint.trigger] = (counts[checkpoint.trigger] ?? 0) + 1;
  return counts;
}

interface InnerState {
  note: string;
  steps: number;
}

/**
 * A parent whose one method runs a @persist flow saved at `persistLocation` (by default where the
 * parent checkpoints).
 */
function nestedFlows(location: string, persistLocation = location) {
  /** What each kickoff of the inner flow returned to the parent's method. */
  const innerResults: FlowResult<InnerState>[] = [];
  @persist({ location: persistLocation })
  class Inner extends Flow<InnerState> {
    initialState = { note: '', steps: 0 };
    @start() first() {
      this.state.steps += 1;
      return 'first';
    }
    @listen('first') second() {
      this.state.steps += 1;
      return 'second';
    }
  }
  class Parent extends Flow<{ note: string; innerNote: string }> {
    initialState = { note: '', innerNote: '' };
    @start() async delegate() {
      const result = await new Inner().kickoff({ inputs: { id: 'inner-state', note: this.state.note } });
      innerResults.push(result);
      this.state.innerNote = result.state.note;
      return result.state.note;
    }
  }
  return { Parent, Inner, innerResults };
}

const parentOptions = (location: string, provider?: JsonProvider) => ({
  bus: new EventBus(),
  checkpoint: { location, onEvents: ['*' as const], ...(provider ? { provider } : {}) },
});

describe("a @persist flow nested in a flow checkpointing on '*'", () => {
  it('writes one checkpoint per completed method, not a second one of its own', async () => {
    const location = freshLocation();
    const { Parent, innerResults } = nestedFlows(location);
    await new Parent(parentOptions(location)).kickoff({ inputs: { note: 'first' } });
    const checkpoints = await checkpointsAt(location);
    const counts = countByTrigger(checkpoints);
    // Two inner methods and the parent's one.
    expect(counts.method_execution_finished).toBe(3);
    // The inner flow's end and the parent's.
    expect(counts.flow_finished).toBe(2);
    // Its result names the checkpoint that holds its end (the run's, written in the background).
    const innerEnd = checkpoints.find((checkpoint) => checkpoint.trigger === 'flow_finished')!;
    expect(innerResults[0]!.checkpoint).toBe(innerEnd.reference);
  });

  it('writes one checkpoint per completed method when the parent reaches the store through a provider object of its own', async () => {
    const location = freshLocation();
    const { Parent } = nestedFlows(location);
    // The parent's JsonProvider and the default one @persist({ location }) uses are two objects for one directory.
    await new Parent(parentOptions(location, new JsonProvider())).kickoff({ inputs: { note: 'first' } });
    expect(countByTrigger(await checkpointsAt(location))).toMatchObject({
      method_execution_finished: 3,
      flow_finished: 2,
    });
  });

  it('resumed before its parent used it, with inputs that change its state, writes its end once', async () => {
    const location = freshLocation();
    const { Parent } = nestedFlows(location);
    await new Parent(parentOptions(location)).kickoff({ inputs: { note: 'first' } });
    const saved = await checkpointsAt(location);
    // The inner flow has finished; the parent's method that kicked it off has not.
    const innerFinished = saved.find((checkpoint) => checkpoint.trigger === 'flow_finished')!;

    const restored = await Parent.fromCheckpoint(
      { restoreFrom: innerFinished.reference },
      { bus: new EventBus() },
    );
    const result = await restored.kickoff({ inputs: { note: 'second' } });
    expect(result.state.innerNote).toBe('second');
    const added = (await checkpointsAt(location)).slice(saved.length);
    // The inner flow's end (its state holds the new note now) and the parent's.
    expect(countByTrigger(added).flow_finished).toBe(2);
  });

  it('is found by its state id as the run left it, from the checkpoints the run wrote', async () => {
    const location = freshLocation();
    const { Parent, Inner } = nestedFlows(location);
    await new Parent(parentOptions(location)).kickoff({ inputs: { note: 'first' } });
    const stored = await checkpointsAt(location);
    const again = await new Inner({ bus: new EventBus() }).kickoff({ inputs: { id: 'inner-state' } });
    expect(again.state).toMatchObject({ note: 'first', steps: 2 });
    expect(await checkpointsAt(location)).toEqual(stored);
  });

  it('still saves its state where its @persist location says, when the parent checkpoints elsewhere', async () => {
    const location = freshLocation();
    const persistLocation = freshLocation();
    const { Parent } = nestedFlows(location, persistLocation);
    await new Parent(parentOptions(location)).kickoff({ inputs: { note: 'first' } });
    expect(countByTrigger(await checkpointsAt(location))).toMatchObject({
      method_execution_finished: 3,
      flow_finished: 2,
    });
    expect(countByTrigger(await checkpointsAt(persistLocation))).toEqual({ method_execution_finished: 2 });
  });

  it('pausing on a question, writes its pause once', async () => {
    const location = freshLocation();
    @persist({ location })
    class Asking extends Flow<{ answer: string }> {
      initialState = { answer: '' };
      @start() async question() {
        this.state.answer = await this.ask('Go on?');
        return this.state.answer;
      }
    }
    let innerResult: FlowResult<{ answer: string }> | undefined;
    class Parent extends Flow<{ status: string }> {
      initialState = { status: '' };
      @start() async delegate() {
        innerResult = await new Asking().kickoff({ inputs: { id: 'asking-state' } });
        this.state.status = innerResult.status;
        return this.state.status;
      }
    }
    const result = await new Parent(parentOptions(location)).kickoff();
    expect(result.state.status).toBe('paused');
    const checkpoints = await checkpointsAt(location);
    expect(countByTrigger(checkpoints).flow_paused).toBe(1);
    // The pause says where to continue: the run's checkpoint of it, written in the background.
    const pause = checkpoints.find((checkpoint) => checkpoint.trigger === 'flow_paused')!;
    expect(innerResult!.pause?.resumeFrom).toBe(pause.reference);
    expect(innerResult!.checkpoint).toBe(pause.reference);
    // Its hint's way on: by state id, from another process (the parent's run went on past the pause).
    expect(innerResult!.pause?.hint).toContain("Asking.resume({ id: 'asking-state' }, answer)");
    const answered = await Asking.resume({ id: 'asking-state' }, 'yes', { bus: new EventBus() });
    expect(answered.status).toBe('completed');
    expect(answered.state.answer).toBe('yes');
  });
});
