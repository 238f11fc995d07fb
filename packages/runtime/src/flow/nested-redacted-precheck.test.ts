// The check before a continuation (checkContinuation: continueFromCheckpoint, the CLI, the terminal
// UI, the explorer) and a flow kicked off in another flow's run whose saved state holds [REDACTED].
// Review R5-1: checked only as it started, a nested flow whose own method set its key was refused
// after the outer flow's methods beside it had run and paid. Review R6 of the first version (337a39d):
// what the runtime resumes fine must not be refused up front (a nested flow a completed method
// handled, one a crew's tool kicked off, checkpoints written before kickoffs recorded their inputs,
// and a key the outer method hands on).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import {
  type CheckpointConfigInput,
  type CheckpointDocument,
  type JsonObject,
  readDocument,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { checkContinuation } from '../restore/check-continuation.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { Flow, listen, start } from './index.js';

const directory = temporaryDirectory('crewline-nested-redacted-precheck-');
afterAll(() => directory.cleanup());

const secret = 'sk-live-0123456789abcdefghij';
const model = offlineModel({ name: 'nested-redacted-precheck' });
let childFails = true;
/** The outer flow's research waits for the nested flow to work (the first run of MakerParent). */
let holdResearch = true;
let releaseResearch: () => void = () => undefined;
afterEach(() => {
  childFails = true;
  holdResearch = true;
  releaseResearch = () => undefined;
  model.reset();
});

/** Sets its own key in its first method: no input of any kickoff gives it. */
class KeyMaker extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() login() {
    this.state.apiKey = secret;
    return 'logged in';
  }
  @listen('login') work() {
    releaseResearch();
    if (childFails) throw new Error('the service went away');
    return this.state.apiKey === secret ? 'worked' : 'no key';
  }
}

/** Handed its key by the method that kicks it off. */
class KeyTaker extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() login() {
    return 'logged in';
  }
  @listen('login') work() {
    if (childFails) throw new Error('the service went away');
    return this.state.apiKey === secret ? 'worked' : 'no key';
  }
}

const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Calm', llm: model });

/**
 * Researches (a paid model call) beside the method that kicks off KeyMaker. In the first run research
 * waits until the nested flow works, so the checkpoint written as the nested flow's login completed
 * has research still to run: a continuation of it runs research again, beside the nested flow.
 */
class MakerParent extends Flow<{ topic: string; notes: string }> {
  initialState = { topic: 'kelp', notes: '' };
  @start() async research() {
    if (holdResearch)
      await new Promise<void>((resolve) => {
        releaseResearch = resolve;
      });
    this.state.notes = (await researcher.kickoff(`Research ${this.state.topic}`)).raw;
    return 'researched';
  }
  @start() async delegate() {
    return (await new KeyMaker().kickoff()).output;
  }
}

/** Hands the key it was kicked off with (its own input, saved as [REDACTED]) to KeyTaker. */
class TakerParent extends Flow<{ topic: string; apiKey: string }> {
  initialState = { topic: 'kelp', apiKey: '' };
  @start() async delegate() {
    return (await new KeyTaker().kickoff({ inputs: { apiKey: this.state.apiKey } })).output;
  }
}

let parentFails = true;
/** Handles KeyMaker's failure in a method that completes; a later method fails (first run). */
class HandlingParent extends Flow<{ topic: string }> {
  initialState = { topic: 'kelp' };
  @start() async delegate() {
    try {
      return (await new KeyMaker().kickoff()).output;
    } catch {
      return 'handled';
    }
  }
  @listen('delegate') publish() {
    if (parentFails) throw new Error('the printer jammed');
    return 'published';
  }
}

const registry = new ProjectRegistry().register({ flows: { MakerParent, TakerParent, HandlingParent } });

/** The flow snapshot of `name` in a checkpoint. */
function flowOf(document: CheckpointDocument, name: string) {
  const snapshot = document.entities.find((entity) => entity.kind === 'flow' && entity.name === name);
  if (snapshot === undefined) throw new Error(`no flow ${name} in checkpoint ${document.metadata.id}`);
  return (snapshot.data as { execution: JsonObject & { inputNames?: string[] } }).execution;
}

/** The checkpoint files of `location` with their documents, oldest first. */
function savedCheckpoints(location: string): { reference: string; document: CheckpointDocument }[] {
  return checkpointFiles(location).map((reference) => ({
    reference,
    document: JSON.parse(readFileSync(reference, 'utf8')) as CheckpointDocument,
  }));
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );
}

describe('the check before a continuation, of a nested flow holding [REDACTED]', () => {
  it('refuses, before any outer method runs and pays, a field the nested flow set itself, naming it and the re-run that works', async () => {
    const location = join(directory.path, 'maker');
    await new MakerParent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } })
      .kickoff()
      .catch(() => undefined);
    // Written as the nested flow's login completed: its key saved as [REDACTED], handed nothing,
    // and the outer flow's research (a model call) still to run.
    const saved = savedCheckpoints(location).find(
      ({ document }) =>
        document.entities.some((entity) => entity.name === 'KeyMaker') &&
        (flowOf(document, 'KeyMaker').completedMethods as string[]).includes('login'),
    )!;
    expect(flowOf(saved.document, 'MakerParent').completedMethods).toEqual([]);
    childFails = false;
    holdResearch = false;
    model.reset();

    const refusal = await rejection(
      continueFromCheckpoint({ reference: saved.reference, mode: 'resume', registry, bus: new EventBus() }),
    );
    expect(model.calls).toHaveLength(0);
    expect(CrewlineError.hasCode(refusal, 'invalid_argument')).toBe(true);
    expect(refusal).toMatchObject({ details: { redactedState: ['apiKey'], rerunFrom: 'delegate' } });
    const message = (refusal as CrewlineError).message;
    expect(message).toContain(
      `checkpoint ${saved.document.metadata.id}: flow "KeyMaker" (kicked off in method "delegate" of flow "MakerParent"): state field "apiKey" is stored as [REDACTED]`,
    );
    expect(message).toContain('none of its kickoffs was handed it');
    expect(message).toContain('rerunFrom "delegate"');
    expect(message).toContain('--from delegate');
    expect(message).not.toContain('--input apiKey');
    expect(message).not.toContain(secret);
    expect(flowOf(saved.document, 'KeyMaker').inputNames).toEqual([]);
    // A fork is refused the same way.
    expect(() => checkContinuation(saved.document, { mode: 'fork' })).toThrow(/flow "KeyMaker"/);

    // The re-run it advises works: the method starts the nested flow afresh, which sets its key again.
    expect(() => checkContinuation(saved.document, { mode: 'resume', rerunFrom: 'delegate' })).not.toThrow();
    const rerun = await continueFromCheckpoint({
      reference: saved.reference,
      mode: 'resume',
      rerunFrom: 'delegate',
      registry,
      bus: new EventBus(),
    });
    // Research paid once, and the nested flow worked with the key its own method set again.
    expect(model.calls).toHaveLength(1);
    const { document: after } = await loadRestoreTarget(rerun.lastCheckpoint!, { bus: new EventBus() });
    expect(flowOf(after, 'MakerParent')).toMatchObject({ status: 'completed' });
    expect(flowOf(after, 'KeyMaker')).toMatchObject({ status: 'completed', lastMethod: 'work' });
  });

  it('leaves a field the method that kicks it off hands on: the run continues with the key given again', async () => {
    const location = join(directory.path, 'taker');
    await new TakerParent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } })
      .kickoff({ inputs: { apiKey: secret } })
      .catch(() => undefined);
    childFails = false;
    const { document } = await loadRestoreTarget(location, { bus: new EventBus() });
    expect(flowOf(document, 'KeyTaker').inputNames).toEqual(['apiKey']);
    // The outer flow's own field: given again, it is handed on.
    expect(() => checkContinuation(document, { mode: 'resume' })).toThrow(/flow "TakerParent"/);
    expect(() => checkContinuation(document, { mode: 'resume', inputs: { apiKey: secret } })).not.toThrow();
    const resumed = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      inputs: { apiKey: secret },
      registry,
      bus: new EventBus(),
    });
    expect(resumed.output).toBe('worked');
  });

  it('skips a failed nested flow a completed method handled: it is carried, never run again', async () => {
    const location = join(directory.path, 'handled');
    parentFails = true;
    await new HandlingParent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } })
      .kickoff()
      .catch(() => undefined);
    parentFails = false;
    const { document } = await loadRestoreTarget(location, { bus: new EventBus() });
    expect(flowOf(document, 'KeyMaker')).toMatchObject({ status: 'failed', inputNames: [] });
    expect(() => checkContinuation(document, { mode: 'resume' })).not.toThrow();
    const resumed = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry,
      bus: new EventBus(),
    });
    expect(resumed.output).toBe('published');
  });

  it('skips a nested flow whose checkpoint recorded no input names (written before they were): checked as it starts', async () => {
    const location = join(directory.path, 'older');
    await new MakerParent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } })
      .kickoff()
      .catch(() => undefined);
    const { document } = await loadRestoreTarget(location, { bus: new EventBus() });
    // As a checkpoint written before inputNames existed holds it.
    const older = structuredClone(document);
    delete (flowOf(older, 'KeyMaker') as { inputNames?: string[] }).inputNames;
    expect(() => checkContinuation(older, { mode: 'resume' })).not.toThrow();
    expect(() => checkContinuation(document, { mode: 'resume' })).toThrow(/flow "KeyMaker"/);
  });
});

/** A crew whose first task's tool kicks off KeyMaker (failing: the tool's error goes to the model). */
function fetchingCrew(llm: ReturnType<typeof offlineModel>, checkpoint?: CheckpointConfigInput): Crew {
  const keys = defineTool({
    name: 'keys',
    description: 'Fetches the keys through a flow',
    inputSchema: z.object({}),
    execute: async () => String((await new KeyMaker().kickoff()).output),
  });
  const fetcher = new Agent({ role: 'Fetcher', goal: 'Fetch', backstory: 'Calm', llm, tools: [keys] });
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Calm', llm });
  return new Crew({
    name: 'fetching',
    agents: [fetcher, writer],
    tasks: [
      new Task({ description: 'Fetch the keys', expectedOutput: 'keys', agent: fetcher }),
      new Task({ description: 'Write it up', expectedOutput: 'text', agent: writer }),
    ],
    ...(checkpoint ? { checkpoint } : {}),
  });
}

/** One tool call (in a conversation offered tools), then an answer. */
const toolModel = offlineModel({ name: 'nested-redacted-tool', script: [{ toolName: 'keys', input: {} }] });
afterEach(() => toolModel.reset());

describe('a flow a tool kicked off', () => {
  it('in a crew that is the run: left to its own check as it starts; the crew continues', async () => {
    const provider = new InMemoryProvider();
    await fetchingCrew(toolModel, { location: 'mem', provider, onEvents: ['task_completed'] }).kickoff({
      bus: new EventBus(),
    });
    // Written as the first task completed: the failed flow the tool kicked off is in it, task 2 left.
    const first = (await provider.list('mem'))[0]!;
    const document = await readDocument(provider, 'mem', first.id);
    expect(flowOf(document, 'KeyMaker')).toMatchObject({ status: 'failed', inputNames: [] });
    expect(() => checkContinuation(document, { mode: 'resume' })).not.toThrow();
    toolModel.reset();
    const output = await fetchingCrew(toolModel).kickoff({
      bus: new EventBus(),
      fromCheckpoint: { restoreFrom: `mem#${first.id}`, provider },
    });
    expect(output.raw).toBeTruthy();
    expect(toolModel.calls).toHaveLength(1);
  });

  it("in a crew a flow's method kicked off: not refused up front, as its saved task is not run again", async () => {
    class Fetching extends Flow<{ topic: string; text: string }> {
      initialState = { topic: 'kelp', text: '' };
      @start() async fetch() {
        this.state.text = (await fetchingCrew(toolModel).kickoff({ bus: this.bus })).raw;
        return 'fetched';
      }
    }
    const provider = new InMemoryProvider();
    await new Fetching({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    }).kickoff();
    const first = (await provider.list('mem'))[0]!;
    const document = await readDocument(provider, 'mem', first.id);
    expect(flowOf(document, 'KeyMaker')).toMatchObject({ status: 'failed', inputNames: [] });
    expect(flowOf(document, 'Fetching').completedMethods).toEqual([]);
    expect(() => checkContinuation(document, { mode: 'resume' })).not.toThrow();
    toolModel.reset();
    const restored = await Fetching.fromCheckpoint(
      { restoreFrom: `mem#${first.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(resumed.output).toBe('fetched');
    // Only the second task's answer: the first task, its tool and the flow it kicked off are not run again.
    expect(toolModel.calls).toHaveLength(1);
  });
});
