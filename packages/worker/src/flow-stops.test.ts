import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, Crew, Flow, listen, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';
import type { HoldChange, WorkerOptions } from './worker-options.js';

/** Called by the model at the start of each call (1-based index); returns the call's latency. */
let onCall: (index: number) => number = () => 50;
const model = offlineModel({ name: 'flow-stops', latencyMs: (call) => onCall(call.index) });

/** Two methods, each running a two-task crew: four model calls, two per method. */
class BriefFlow extends Flow<{ topic: string; facts: string; brief: string }> {
  initialState = { topic: '', facts: '', brief: '' };

  @start()
  async gather() {
    this.state.facts = await runCrew(this, ['List facts on {topic}', 'Rank the facts on {topic}']);
    return this.state.facts;
  }

  @listen('gather')
  async write() {
    this.state.brief = await runCrew(this, ['Outline a brief on {topic}', 'Write the brief on {topic}']);
    return this.state.brief;
  }
}

// The crew is kicked off as the guides write it, without passing the flow's bus on: the worker gives
// the flow a bus of its own, and the crew must still be part of the flow's run (its calls seen by the
// hand-back, checkpointed with the flow, restored on the next attempt). Found by a trial: before,
// such crews ran as separate runs, and a flow taken over paid for every call of its crews again.
async function runCrew(flow: BriefFlow, descriptions: string[]): Promise<string> {
  const agent = new Agent({ role: 'Writer', goal: 'Write on {topic}', backstory: 'Clear', llm: model });
  const crew = new Crew({
    agents: [agent],
    tasks: descriptions.map((description) => new Task({ description, expectedOutput: 'text', agent })),
  });
  return (await crew.kickoff({ inputs: { topic: flow.state.topic } })).raw;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  onCall = () => 50;
  model.reset();
});

async function setUp() {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const released: HoldChange[] = [];
  const workers: Worker[] = [];
  const startWorker = async (options: Partial<WorkerOptions> = {}) => {
    const worker = new Worker({
      location,
      runs: { flows: { brief: BriefFlow } },
      leaseTtlMs: 1500,
      pollIntervalMs: 100,
      onHold: (change) => {
        if (change.change === 'released') released.push(change);
      },
      ...options,
    });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  const schema = new URL(location).searchParams.get('schema');
  cleanups.push(async () => {
    for (const worker of workers) await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { queue, startWorker, released };
}

async function until(found: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !found(); waited += 20) {
    if (waited > 30_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describeWithPostgres('a worker stops a flow in the middle', () => {
  it('hands a flow back on stop after the model call in flight, and another worker continues it paying no completed call again', async () => {
    const { queue, startWorker, released } = await setUp();
    const first = await startWorker();
    let stopping: Promise<void> | undefined;
    onCall = (index) => {
      // A deploy while the second call (the first method's crew, second task) is in flight.
      if (index === 2) stopping = first.stop({ handBack: true });
      return 300;
    };
    const { run } = await queue.enqueue('brief', { inputs: { topic: 'kelp' } });
    await until(() => stopping !== undefined, 'the second model call');
    await stopping;
    // The call in flight finished and was checkpointed; the flow stopped before the third.
    expect(model.calls).toHaveLength(2);
    expect(released.map((change) => change.outcome)).toEqual(['handed-back']);
    const handedBack = await queue.require(run.id);
    expect(handedBack).toMatchObject({ status: 'queued', failures: 0, attempts: 1 });

    onCall = () => 20;
    await startWorker();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 0 });
    expect(ended!.output).toContain('Write the brief on kelp');
    // Four calls in all, as an uninterrupted run makes, none asked twice.
    const prompts = model.calls.map((call) => JSON.stringify(call.messages));
    expect(prompts).toHaveLength(4);
    expect(new Set(prompts).size).toBe(4);
    // The run's checkpoints hold its crews' calls: what `crewline runs show` counts.
    expect((await queue.progress(run.id)).modelCalls).toBe(4);
  });

  it('stops a flow at its run timeout, aborting the model call in flight (the run fails, unretried)', async () => {
    const { queue, startWorker, released } = await setUp();
    onCall = (index) => (index === 3 ? 60_000 : 20);
    await startWorker();
    const began = Date.now();
    const { run } = await queue.enqueue('brief', { inputs: { topic: 'kelp' }, timeoutMs: 1500 });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(Date.now() - began).toBeLessThan(20_000);
    expect(ended).toMatchObject({ status: 'failed', errorCode: 'aborted', attempts: 1 });
    expect(ended!.error).toContain('timed out after 1500 ms');
    expect(released.map((change) => change.outcome)).toEqual(['failed']);
  });

  it('stops a cancelled running flow, the model call in flight aborted, and frees its slot', async () => {
    const { queue, startWorker, released } = await setUp();
    onCall = (index) => (index === 1 ? 60_000 : 20);
    const worker = await startWorker();
    const { run } = await queue.enqueue('brief', { inputs: { topic: 'kelp' } });
    await until(() => model.calls.length === 1, 'the first model call');
    await queue.cancel(run.id);
    await until(() => released.length === 1, 'the cancelled run to be released');
    expect(released[0]!.outcome).toBe('cancelled');
    expect(worker.activeRunIds).toEqual([]);
    expect((await queue.require(run.id)).status).toBe('cancelled');
    expect(model.calls).toHaveLength(1);
  });
});
