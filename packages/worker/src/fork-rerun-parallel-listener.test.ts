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

// alpha and beta listen to one method and run side by side. The checkpoint `queue.fork` picks for
// `rerunFrom: 'beta'` is the one written as alpha completed, while beta's crew was half done: the
// fork must start beta's crew afresh on the new inputs (as `kickoff({ rerunFrom })` and `crewline
// checkpoint flows rerun` do), not continue its saved conversation on the old ones, and keep
// alpha's finished crew as saved.

const model = offlineModel({ name: 'worker-fork-rerun-parallel-listener', latencyMs: 40 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function crewOf(topic: string, steps: readonly string[], flow: Flow<any>): Promise<string> {
  const agent = new Agent({ role: `Writer ${topic}`, goal: 'Write', backstory: 'Plain', llm: model });
  const crew = new Crew({
    name: `${topic}-crew`,
    agents: [agent],
    tasks: steps.map((step) => new Task({ description: `${step} ${topic}`, expectedOutput: 'text', agent })),
  });
  return crew.kickoff({ bus: flow.bus }).then((output) => output.raw);
}

class SideBySide extends Flow<{ wording: string; alpha: string; beta: string }> {
  initialState = { wording: 'Draft', alpha: '', beta: '' };
  @start() begin() {
    return 'go';
  }
  // Completes while beta's crew is between its tasks: the checkpoint written then holds beta half done.
  @listen('begin') async alpha() {
    this.state.alpha = await crewOf('apples', ['Write'], this);
    await sleep(60);
    return 'alpha';
  }
  @listen('begin') async beta() {
    this.state.beta = await crewOf(
      'bananas',
      [1, 2, 3].map((step) => `${this.state.wording} part ${step} of`),
      this,
    );
    return 'beta';
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describeWithPostgres('queue.fork rerunFrom a method that ran beside another listener', () => {
  it("runs that method's crew afresh on the fork's inputs and keeps the other method's crew", async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const worker = new Worker({
      location,
      runs: { flows: { side: SideBySide } },
      pollIntervalMs: 100,
      checkpointOn: ['method_execution_finished'],
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      const schema = new URL(location).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('side', { inputs: { wording: 'Draft' }, maxAttempts: 1 });
    await worker.start();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed' });
    expect(model.calls.length).toBe(4);
    model.reset();

    const rerun = await queue.fork(run.id, { rerunFrom: 'beta', inputs: { wording: 'Rewrite' } });
    // The method is stored with the fork: the worker that takes it may be another process.
    const schema = new URL(location).searchParams.get('schema');
    const { rows } = await withServer((client) =>
      client.query(`SELECT rerun_from FROM "${schema}".worker_runs WHERE id = $1`, [rerun.id]),
    );
    expect(rows).toEqual([{ rerun_from: 'beta' }]);
    const [rerunEnd] = await queue.waitForEnd([rerun.id], { timeoutMs: 30_000 });
    expect(rerunEnd, rerunEnd?.error ?? '').toMatchObject({ status: 'completed' });
    const asked = model.calls.map((call) => call.userText);
    // alpha's crew is restored, not paid again; beta's three tasks run anew, on the new wording only.
    expect(asked.filter((text) => text.includes('apples'))).toEqual([]);
    expect(asked.filter((text) => text.includes('bananas')).length).toBe(3);
    expect(asked.filter((text) => text.includes('Draft part'))).toEqual([]);
    expect(asked.filter((text) => text.includes('Rewrite part')).length).toBe(3);
  });
});

describeWithPostgres('a runs table made before forks stored their rerunFrom method (layout 4)', () => {
  it('gets the rerun_from column from the first client to open it', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema');
    const columnNamed = async () =>
      (
        await withServer((client) =>
          client.query(
            `SELECT 1 FROM information_schema.columns
              WHERE table_schema = $1 AND table_name = 'worker_runs' AND column_name = 'rerun_from'`,
            [schema],
          ),
        )
      ).rows.length;
    const older = new RunQueue({ location, create: true });
    await older.list();
    await withServer((client) => client.query(`ALTER TABLE "${schema}".worker_runs DROP COLUMN rerun_from`));
    await older.close();
    expect(await columnNamed()).toBe(0);
    const queue = new RunQueue({ location, create: true });
    cleanups.push(async () => {
      await queue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    await queue.list();
    expect(await columnNamed()).toBe(1);
  });
});
