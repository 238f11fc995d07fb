import { Flow, listen, start } from '@crewline/runtime';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

/** Which methods ran, in order, across attempts; `failOnce` makes `shape` fail on its first run. */
const ran: string[] = [];
let failOnce = true;

class NoteFlow extends Flow<{ topic: string; note: string }> {
  initialState = { topic: '', note: '' };

  @start()
  gather() {
    ran.push('gather');
    return `facts on ${this.state.topic}`;
  }

  @listen('gather')
  shape(facts: string) {
    ran.push('shape');
    if (failOnce) {
      failOnce = false;
      throw new Error('shape failed once, on purpose');
    }
    this.state.note = `a note from ${facts}`;
    return this.state.note;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describeWithPostgres('a worker running a registered flow', () => {
  it('runs it with the run inputs and continues a failed attempt from its checkpoint (completed methods skipped)', async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const worker = new Worker({
      location,
      runs: { flows: { notes: NoteFlow } },
      leaseTtlMs: 1500,
      pollIntervalMs: 100,
      retryDelayMs: 200,
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      const schema = new URL(location).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('notes', { inputs: { topic: 'kelp' } });
    await worker.start();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    expect(ended!.output).toContain('a note from facts on kelp');
    expect(ended!.error).toContain('shape failed once, on purpose');
    expect(ended!.currentTask).toBe('shape');
    // The second attempt skipped `gather`, which its first attempt had completed and checkpointed.
    expect(ran).toEqual(['gather', 'shape', 'shape']);
  });
});
