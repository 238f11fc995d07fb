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

// Review RF-3 of f6dcd4e: `runs show` redacts a run in a process that never ran it, so the password of
// an address input, which the worker that ran it registered by value, was printed bare where the run's
// output quotes it.
describeWithPostgres('crewline runs show: the password of an address input', () => {
  let url: string;
  let project: string;
  const crewline = (...args: string[]) =>
    runCommand(args, { cwd: project, env: { CREWLINE_WORKER_LOCATION: url } });

  beforeAll(() => {
    url = temporaryLocation();
    project = mkdtempSync(join(tmpdir(), 'crewline-cli-runs-show-'));
  });
  afterAll(async () => {
    await dropLocation(url);
    const schema = new URL(url).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    rmSync(project, { recursive: true, force: true });
  });

  it('is redacted where the output quotes it bare, by show (text and JSON) and list --json', async () => {
    const password = 'RunsShow9xqK';
    const enqueued = await crewline(
      'runs',
      'enqueue',
      'report',
      '--create',
      '--input',
      `db=postgres://admin:${password}@db.internal/app`,
      '--json',
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const { run } = JSON.parse(enqueued.stdout);
    // What a worker that ran it stores: its output, written in the worker's process.
    const schema = new URL(url).searchParams.get('schema');
    await withServer((client) =>
      client.query(`UPDATE "${schema}".worker_runs SET output = $1 WHERE id = $2`, [
        `Connected; the database password is ${password}.`,
        run.id,
      ]),
    );
    // Listed first: each command registers what it prints, not what an earlier one did.
    const listed = await crewline('runs', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('Connected; the database password is [REDACTED].');
    const text = await crewline('runs', 'show', run.id);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Connected; the database password is [REDACTED].');
    const json = await crewline('runs', 'show', run.id, '--json');
    expect(json.code, json.stderr).toBe(0);
    for (const output of [text.stdout, json.stdout, listed.stdout]) expect(output).not.toContain(password);
  });
});
