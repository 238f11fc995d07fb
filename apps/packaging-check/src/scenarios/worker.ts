import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
// The `postgresUrl` that provider-postgres's global setup (named in vitest.config.ts) provides.
import type {} from '@crewline/provider-postgres/test-support';
import { expect, inject, type TestContext } from 'vitest';
import { run } from '../support/commands.js';
import type { CheckContext } from '../support/context.js';
import { type UserProject, userEnvironment } from '../support/project.js';
import { runtimeAndCli } from '../support/user-scripts.js';

/** What a project that runs workers installs: the runtime and the CLI, the worker and its Postgres peer. */
const workerPackages = [...runtimeAndCli, '@crewline/provider-postgres', '@crewline/worker'];

// The public API from plain JavaScript: the classes and values a user's code reaches for.
const apiScript = `import { defineRuns, RunQueue, RunRegistry, runStatuses, Worker } from '@crewline/worker';

const registry = new RunRegistry(defineRuns({ crews: { report: () => undefined } }));
console.log(JSON.stringify({
  names: registry.names(),
  statuses: runStatuses,
  classes: [RunQueue, Worker].map((value) => typeof value),
}));
`;

// The public API from TypeScript. Each @ts-expect-error is an error only when the types resolved: with
// a declaration missing, everything is \`any\` and tsc reports the directive as unused instead.
const apiTypes = `import {
  defineRuns,
  type EnqueueOptions,
  type RunQueue,
  type RunRecord,
  type RunStatus,
  runStatuses,
  Worker,
  type WorkerOptions,
} from '@crewline/worker';
import config from './crewline.config.ts';

export const options: WorkerOptions = { location: 'postgres://user@host:5432/db', runs: config.runs, concurrency: 2 };
export const enqueue: EnqueueOptions = { inputs: { topic: 'tides' }, idempotencyKey: 'order-17' };
export const ended: RunStatus[] = runStatuses.filter((status) => status !== 'running');
// @ts-expect-error: not a status of a run
export const unknown: RunStatus = 'finished';
// @ts-expect-error: a crew factory returns a Crew of @crewline/runtime, not a string
export const wrong = defineRuns({ crews: { report: () => 'a crew' } });
export const worker = new Worker(options);
export async function outputOf(queue: RunQueue, id: string): Promise<string | null> {
  const record: RunRecord = await queue.require(id);
  return record.output;
}
`;

// tsc --init's defaults where they matter (strict, skipLibCheck); no @types/node in the project.
const tsconfig = {
  compilerOptions: {
    module: 'nodenext',
    target: 'es2022',
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    types: [],
  },
  files: ['crewline.config.ts', 'api.ts'],
};

/**
 * A project that runs crews on the queue, as a new user of the tarballs sets it up: `npm install` of
 * the worker with its peers, the README's `crewline.config.ts` (a two-task crew registered as
 * `report`, offline model), a Postgres server; then the installed `crewline runs enqueue`, a
 * `crewline worker` that takes the run and is stopped with SIGTERM once it completed, and `crewline
 * runs list`, `runs show` and `checkpoint info` on the run's last checkpoint. Beside it, the public
 * API imported from a .mjs (run) and a .ts (type-checked).
 */
export async function workerTakesQueuedRun(context: CheckContext, test: TestContext): Promise<void> {
  const server = inject('postgresUrl');
  if (server === undefined) {
    // The global setup printed how to get a server; under CI it failed the run instead.
    test.skip('no Postgres server to queue runs on');
    return;
  }
  const project = await context.project('worker');
  await project.install(context.tarballs(...workerPackages));
  context.report(`install size, runtime + CLI + worker: ${await project.installSize()}`);
  const config = await readFile(
    join(context.workspaceRoot, 'packages/worker/src/examples/readme-config.ts'),
    'utf8',
  );
  await project.write('crewline.config.ts', config);
  await project.write('api.mjs', apiScript);
  await project.write('api.ts', apiTypes);
  await project.write('tsconfig.json', `${JSON.stringify(tsconfig, null, 2)}\n`);

  // A schema of its own: a server given through CREWLINE_TEST_POSTGRES_URL may hold other runs.
  const url = new URL(server);
  const schema = `packaging_${randomBytes(4).toString('hex')}`;
  const password = decodeURIComponent(url.password);
  url.password = '';
  url.searchParams.set('schema', schema);
  // The password as the docs tell users to pass it: from PGPASSWORD, never in the location.
  const location = url.href;
  // The flow's queue on a schema of its own: its worker and the crew's worker then never see each
  // other's runs.
  const flowSchema = `${schema}_flow`;
  url.searchParams.set('schema', flowSchema);
  const flowLocation = url.href;
  try {
    // All to their end before the first failure is thrown: the workers' parts stop their processes in
    // a finally, which must run before the server goes away with the test run.
    const outcomes = await Promise.allSettled([
      publicApiResolves(context, project),
      queuedRunCompletes(project, location, password),
      queuedFlowCompletes(context, project, flowLocation, password),
    ]);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    await dropSchemas(project, server, schema);
    await dropSchemas(project, server, flowSchema);
  }
}

// The flow-state page's flow, queued by name: the worker loads it through crewline.config.ts, as the
// installed CLI does, without a TypeScript loader (decorators and their metadata included).
const flowConfig = `import { defineConfig } from '@crewline/runtime';
import { defineRuns } from '@crewline/worker';
import { ReportFlow } from './report-flow.js';

export default { ...defineConfig({ flows: { ReportFlow } }), runs: defineRuns({ flows: { report: ReportFlow } }) };
`;

/**
 * In a directory of the same project (its node_modules found above it): the page's `report-flow.ts`,
 * a config that registers it under `runs.flows`, a `crewline worker` there, and a run of it enqueued
 * that completes.
 */
async function queuedFlowCompletes(
  context: CheckContext,
  project: UserProject,
  location: string,
  password: string,
): Promise<void> {
  const page = await readFile(join(context.workspaceRoot, 'docs/flow-state-persistence.md'), 'utf8');
  const flowFile = /<!-- file: report-flow\.ts -->\n```ts\n([\s\S]*?)\n```/.exec(page)?.[1];
  expect(flowFile, 'report-flow.ts of docs/flow-state-persistence.md').toBeDefined();
  const flows = await project.subproject('flows');
  await flows.write('report-flow.ts', `${flowFile}\n`);
  await flows.write('crewline.config.ts', flowConfig);
  const env = { PGPASSWORD: password, CREWLINE_MODEL: 'offline:demo' };
  const worker = flows.startBin('crewline', ['worker', '--location', location], env);
  try {
    await worker.waitFor(/taking runs/, 60_000);
    const enqueued = await flows.bin(
      'crewline',
      ['runs', 'enqueue', 'report', '--input', 'id=tides-report', '--location', location, '--json'],
      env,
    );
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    const { run: queued } = JSON.parse(enqueued.stdout) as { run: { id: string } };
    const [, outcome] = await worker.waitFor(new RegExp(`^run ${queued.id}: (\\w+)$`, 'm'), 60_000);
    expect(outcome, `${worker.stdout}\n${worker.stderr}`).toBe('completed');
    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(worker.stderr).toBe('');
    const show = await flows.bin(
      'crewline',
      ['runs', 'show', queued.id.slice(0, 8), '--location', location],
      env,
    );
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^status +completed$/m);
  } finally {
    await worker.stop('SIGTERM');
  }
}

async function publicApiResolves(context: CheckContext, project: UserProject): Promise<void> {
  const imported = await project.node(['api.mjs']);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  expect(JSON.parse(imported.stdout)).toEqual({
    names: ['report'],
    statuses: ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'],
    classes: ['function', 'function'],
  });
  const typecheck = await run(join(context.binaries, 'tsc'), ['-p', project.directory], {
    cwd: project.directory,
    env: userEnvironment(),
  });
  expect(`${typecheck.stdout}${typecheck.stderr}`).toBe('');
  expect(typecheck.code).toBe(0);
}

async function queuedRunCompletes(project: UserProject, location: string, password: string): Promise<void> {
  const env = { PGPASSWORD: password, CREWLINE_WORKER_LOCATION: location };
  // As the README orders it: a worker first, then anything enqueues.
  const worker = project.startBin('crewline', ['worker', '--location', location], { PGPASSWORD: password });
  try {
    await worker.waitFor(/taking runs/, 60_000);
    const enqueued = await project.bin(
      'crewline',
      [
        'runs',
        'enqueue',
        'report',
        '--input',
        'topic=tides',
        '--idempotency-key',
        'packaging-check',
        '--json',
      ],
      env,
    );
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    const { run: queued } = JSON.parse(enqueued.stdout) as { run: { id: string; status: string } };
    expect(queued.status).toBe('queued');
    const [, outcome] = await worker.waitFor(new RegExp(`^run ${queued.id}: (\\w+)$`, 'm'), 60_000);
    expect(outcome, worker.stdout).toBe('completed');
    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(worker.stdout).toContain(`took run ${queued.id} (attempt 1)`);
    expect(worker.stdout).toMatch(/\nSIGTERM: handing back 0 run\(s\)\nstopped\n$/);
    expect(worker.stderr).toBe('');

    const [list, show] = await Promise.all([
      project.bin('crewline', ['runs', 'list'], env),
      project.bin('crewline', ['runs', 'show', queued.id.slice(0, 8)], env),
    ]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${queued.id} +report +completed +1 `, 'm'));
    expect(show.stderr).toBe('');
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^status +completed$/m);
    expect(show.stdout).toMatch(/^progress +2 model call\(s\) checkpointed/m);
    // The crew's output: the last task's answer from the offline model.
    expect(show.stdout).toMatch(
      /\n\n\[offline model\] default answering: Write the report on tides from the outline\n/,
    );

    // The command `runs show` prints to inspect the run's checkpoints, run as printed.
    const inspect = show.stdout.match(/^inspect +crewline checkpoint info '([^']+)'$/m);
    expect(inspect, show.stdout).not.toBeNull();
    const info = await project.bin('crewline', ['checkpoint', 'info', inspect![1]!], env);
    expect(info.stderr).toBe('');
    expect(info.code).toBe(0);
    expect(info.stdout).toContain('crew report');
    expect(info.stdout).toContain('2/2 tasks completed');
  } finally {
    await worker.stop('SIGTERM');
  }
}

/** Removes what the scenario put on the server: the checkpoints and runs, and pg-boss's tables. */
async function dropSchemas(project: UserProject, server: string, schema: string): Promise<void> {
  const script = `import pg from 'pg';
const client = new pg.Client({ connectionString: process.env.SERVER });
await client.connect();
await client.query('DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE');
await client.end();
`;
  // Best effort: a throwaway cluster goes with everything in it anyway, and a failure here must not
  // hide the one that made the scenario fail.
  await project.node(['--input-type=module', '-e', script], { SERVER: server });
}
