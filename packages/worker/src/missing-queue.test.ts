import { CrewlineError } from '@crewline/events';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory } from './test-support/report-crew.js';
import { Worker } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A location no one has used yet, dropped after the test with its pg-boss schema. */
function freshLocation(): { location: string; schema: string } {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema')!;
  cleanups.push(async () => {
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { location, schema };
}

function openQueue(options: ConstructorParameters<typeof RunQueue>[0]): RunQueue {
  const queue = new RunQueue(options);
  cleanups.push(() => queue.close());
  return queue;
}

async function schemasCreated(schema: string): Promise<string[]> {
  const { rows } = await withServer((client) =>
    client.query<{ schema_name: string }>(
      'SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ($1, $2) ORDER BY 1',
      [schema, `${schema}_queue`],
    ),
  );
  return rows.map((row) => row.schema_name);
}

async function refusal(work: Promise<unknown>): Promise<CrewlineError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(CrewlineError.isInstance(error), String(error)).toBe(true);
  return error as CrewlineError;
}

describeWithPostgres('a queue no worker has created', () => {
  // The trial: `crewline runs list --location …?schema=nosuch` printed "No runs" and created the
  // schema and its pg-boss tables; `runs enqueue` queued a run into it that no worker would read.
  it('is refused by reads (not_found naming the schema and how to create it) and they create nothing', async () => {
    const { location, schema } = freshLocation();
    const queue = openQueue({ location });
    for (const read of [
      () => queue.list(),
      () => queue.get('f1d2d2f9-0000-4000-8000-000000000000'),
      () => queue.require('f1d2'),
      () => queue.progress('f1d2'),
      () => queue.cancel('f1d2'),
    ]) {
      const error = await refusal(read());
      expect(error.code).toBe('not_found');
      expect(error.message).toContain(
        `the run queue ${queue.location} does not exist: schema "${schema}" has no runs table`,
      );
      expect(error.message).toContain('start a worker on this location first');
      expect(error.message).not.toContain('--create');
    }
    expect(await schemasCreated(schema)).toEqual([]);
  });

  it('is refused by enqueue unless the client is told to create it, and names how', async () => {
    const { location, schema } = freshLocation();
    const error = await refusal(openQueue({ location }).enqueue('report', { inputs: { topic: 'tides' } }));
    expect(error.code).toBe('not_found');
    expect(error.message).toContain('crewline runs enqueue --create; RunQueue option create: true');
    expect(await schemasCreated(schema)).toEqual([]);

    const { run, created } = await openQueue({ location, create: true }).enqueue('report', {
      inputs: { topic: 'tides' },
    });
    expect(created).toBe(true);
    expect(await schemasCreated(schema)).toEqual([schema, `${schema}_queue`]);
    // Once created, a client that does not create reads and enqueues as before.
    const reader = openQueue({ location });
    expect((await reader.list()).map((listed) => listed.id)).toEqual([run.id]);
    expect((await reader.enqueue('report', { inputs: { topic: 'kelp' } })).created).toBe(true);
  });

  it('is created by the first worker that starts on it', async () => {
    const { location, schema } = freshLocation();
    const worker = new Worker({ location, runs: { crews: { report: reportCrewFactory() } } });
    cleanups.push(() => worker.stop({ handBack: false }));
    await worker.start();
    expect(await schemasCreated(schema)).toEqual([schema, `${schema}_queue`]);
    expect(await openQueue({ location }).list()).toEqual([]);
  });

  it('names the schemas that hold a run queue, for a misspelt ?schema=', async () => {
    const { location: existing, schema: existingSchema } = freshLocation();
    await openQueue({ location: existing, create: true }).list();
    const { location } = freshLocation();
    const error = await refusal(openQueue({ location }).list());
    expect(error.message).toMatch(/schemas holding run queues here: .*"/);
    // At most five are named: the one just created may sort after them.
    const named = /schemas holding run queues here: ([^)]*)\)/.exec(error.message)![1]!;
    if (!named.endsWith('...')) expect(named).toContain(`"${existingSchema}"`);
  });
});
