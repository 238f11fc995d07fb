import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
// The Postgres server of provider-postgres's own tests (see vitest.config.ts), through the workspace.
import type {} from '../../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '../../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';
import { runCommand } from '../test-support/run-command.js';

async function schemasNamed(schema: string): Promise<string[]> {
  const { rows } = await withServer((client) =>
    client.query<{ schema_name: string }>(
      'SELECT schema_name FROM information_schema.schemata WHERE schema_name IN ($1, $2) ORDER BY 1',
      [schema, `${schema}_queue`],
    ),
  );
  return rows.map((row) => row.schema_name);
}

// The trial: `crewline runs list --location '…?schema=nosuch'` printed "No runs", exit 0, and created
// the schema and pg-boss's tables; `runs enqueue` queued into a queue no worker reads.
describeWithPostgres('crewline runs on a queue no worker has created', () => {
  let url: string;
  let schema: string;
  let project: string;
  const crewline = (...args: string[]) =>
    runCommand(args, { cwd: project, env: { CREWLINE_WORKER_LOCATION: url } });

  beforeAll(() => {
    url = temporaryLocation();
    schema = new URL(url).searchParams.get('schema')!;
    project = mkdtempSync(join(tmpdir(), 'crewline-cli-no-queue-'));
  });
  afterAll(async () => {
    await dropLocation(url);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    rmSync(project, { recursive: true, force: true });
  });

  it('refuses list, show and enqueue with exit code 3 naming the schema, and creates nothing', async () => {
    for (const args of [
      ['runs', 'list'],
      ['runs', 'show', 'f1d2'],
      ['runs', 'cancel', 'f1d2'],
      ['runs', 'enqueue', 'report'],
    ]) {
      const result = await crewline(...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`does not exist: schema "${schema}" has no runs table`);
      expect(result.stderr).toContain('start a worker on this location first');
      expect(result.stderr.includes('crewline runs enqueue --create'), args.join(' ')).toBe(
        args[1] === 'enqueue',
      );
    }
    expect(await schemasNamed(schema)).toEqual([]);
  });

  it('creates the queue on enqueue --create only, and reads it afterwards', async () => {
    const misplaced = await crewline('runs', 'list', '--create');
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--create is an option of crewline runs enqueue, not of runs list');
    expect(await schemasNamed(schema)).toEqual([]);
    const enqueued = await crewline('runs', 'enqueue', 'report', '--create', '--json');
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(await schemasNamed(schema)).toEqual([schema, `${schema}_queue`]);
    const listed = await crewline('runs', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).runs).toHaveLength(1);
  });
});
