import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setLogSink } from '@crewline/events';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { RunQueue, Worker } from '@crewline/worker';
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

describeWithPostgres('crewline runs (the queue of @crewline/worker)', () => {
  let url: string;
  let project: string;
  const crewline = (...args: string[]) =>
    runCommand(args, { cwd: project, env: { CREWLINE_WORKER_LOCATION: url } });

  beforeAll(() => {
    url = temporaryLocation();
    project = mkdtempSync(join(tmpdir(), 'crewline-cli-runs-'));
  });
  afterAll(async () => {
    await dropLocation(url);
    const schema = new URL(url).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    rmSync(project, { recursive: true, force: true });
  });

  it('enqueues by registered name (idempotently), lists, shows and cancels, in text and JSON', async () => {
    // The first enqueue creates the queue: no worker has started on this location yet.
    const enqueued = await crewline(
      'runs',
      'enqueue',
      'report',
      '--create',
      '--input',
      'topic=tides',
      '--input',
      'pages:=3',
      '--idempotency-key',
      'k-1',
      '--priority',
      '2',
      '--json',
    );
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    const { created, run } = JSON.parse(enqueued.stdout);
    expect(created).toBe(true);
    expect(run).toMatchObject({
      name: 'report',
      status: 'queued',
      inputs: { topic: 'tides', pages: 3 },
      priority: 2,
      attempts: 0,
    });

    const again = await crewline(
      'runs',
      'enqueue',
      'report',
      '--input',
      'topic=other',
      '--idempotency-key',
      'k-1',
    );
    expect(again.stdout).toContain(`run ${run.id} already exists for that idempotency key (queued)`);
    // Found by a trial: the other inputs were dropped without a word.
    expect(again.stdout).toContain('it keeps its own inputs: the ones given here were not used');

    const listed = JSON.parse((await crewline('runs', 'list', '--json')).stdout);
    expect(listed.runs.map((entry: { id: string }) => entry.id)).toEqual([run.id]);
    expect(listed.location).not.toContain(decodeURIComponent(new URL(url).password));
    const table = await crewline('runs', 'list');
    expect(table.stdout).toMatch(new RegExp(`${run.id}\\s+report\\s+queued\\s+0`));

    const shown = await crewline('runs', 'show', run.id);
    expect(shown.stdout).toContain('status     queued');
    expect(shown.stdout).toContain('inputs     {"pages":3,"topic":"tides"}');
    // No model call yet: nothing spent, and no price table needed to say so.
    expect(shown.stdout).toContain('cost       $0 (no model calls)');

    const cancelled = JSON.parse((await crewline('runs', 'cancel', run.id, '--json')).stdout);
    expect(cancelled).toMatchObject({ id: run.id, status: 'cancelled' });
    expect(JSON.parse((await crewline('runs', 'list', '--status', 'queued', '--json')).stdout).runs).toEqual(
      [],
    );
  });

  // Review 3 #2: `runs show` and `runs enqueue --json` printed an API key and a database password
  // from the inputs, which `checkpoint info` of the same run shows as [REDACTED].
  it("prints a run's inputs redacted as checkpoints redact them, and queues them as given", async () => {
    const apiKey = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const database = 'postgres://app:Hunter2Pw@db.internal/x';
    const enqueued = await crewline(
      'runs',
      'enqueue',
      'report',
      '--input',
      'topic=tides',
      '--input',
      `openaiApiKey=${apiKey}`,
      '--input',
      `db=${database}`,
      '--json',
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const { run } = JSON.parse(enqueued.stdout);
    // By its name (openaiApiKey) and by its shape (a URL's password), as in a checkpoint.
    expect(run.inputs).toEqual({
      topic: 'tides',
      openaiApiKey: '[REDACTED]',
      db: 'postgres://app:[REDACTED]@db.internal/x',
    });
    const shown = await crewline('runs', 'show', run.id);
    expect(shown.stdout).toMatch(/^inputs {5}\{.*"openaiApiKey":"\[REDACTED\]".*\}$/m);
    expect(shown.stdout).toContain('"db":"postgres://app:[REDACTED]@db.internal/x"');
    const printed = [
      enqueued.stdout,
      shown.stdout,
      (await crewline('runs', 'show', run.id, '--json')).stdout,
      (await crewline('runs', 'list', '--json')).stdout,
      (await crewline('runs', 'cancel', run.id, '--json')).stdout,
    ];
    for (const output of printed) {
      expect(output).not.toContain(apiKey);
      expect(output).not.toContain('Hunter2Pw');
    }
    // A worker runs the crew with the real values: the queue row keeps them as given.
    const queue = new RunQueue({ location: url });
    try {
      expect((await queue.require(run.id)).inputs).toEqual({
        topic: 'tides',
        openaiApiKey: apiKey,
        db: database,
      });
    } finally {
      await queue.close();
    }
  });

  // Review 3 #3: the location printed by `runs list` kept a password given as ?password=.
  it('prints the queue location without a password given as a ?password= parameter', async () => {
    const withParameter = new URL(url);
    // The test server's own password when it has one; any value logs in to a server that trusts.
    const password = decodeURIComponent(withParameter.password) || 'Rev3Secret!pw';
    withParameter.password = '';
    withParameter.searchParams.set('password', password);
    const text = await crewline('runs', 'list', '--status', 'paused', '--location', withParameter.href);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^No paused runs in postgres:\/\/\S+\n$/);
    const json = await crewline('runs', 'list', '--json', '--location', withParameter.href);
    expect(json.code, json.stderr).toBe(0);
    for (const output of [text.stdout, json.stdout]) {
      expect(output).not.toContain('password=');
      expect(output).not.toContain(encodeURIComponent(password));
      expect(output).not.toContain(password);
    }
  });

  it('takes a unique start of a run id, says when a cancel finds the run ended, and names the status listed', async () => {
    const first = JSON.parse(
      (
        await crewline(
          'runs',
          'enqueue',
          'report',
          '--input',
          'topic=a',
          '--idempotency-key',
          'p-1',
          '--json',
        )
      ).stdout,
    ).run;
    const shown = await crewline('runs', 'show', first.id.slice(0, 13));
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain(`run        ${first.id}`);
    // Ids are random hexadecimal: among 17 runs, two start with the same digit.
    const byDigit = new Map<string, string>([[first.id[0], first.id]]);
    for (let index = 0; index < 17; index += 1) {
      const { id } = JSON.parse((await crewline('runs', 'enqueue', 'report', '--json')).stdout).run;
      const earlier = byDigit.get(id[0]);
      if (earlier !== undefined) {
        const ambiguous = await crewline('runs', 'show', id[0]);
        expect(ambiguous.code).toBe(3);
        expect(ambiguous.stderr).toContain(`run id ${id[0]} is ambiguous`);
        expect(ambiguous.stderr).toContain(earlier);
        expect(ambiguous.stderr).toContain(id);
        break;
      }
      byDigit.set(id[0], id);
    }
    expect((await crewline('runs', 'cancel', first.id.slice(0, 13))).stdout).toBe(
      `run ${first.id}: cancelled\n`,
    );
    const again = await crewline('runs', 'cancel', first.id);
    expect(again.stdout).toBe(`run ${first.id} already cancelled; nothing cancelled\n`);
    expect(again.code).toBe(0);
    expect(JSON.parse((await crewline('runs', 'cancel', first.id, '--json')).stdout)).toMatchObject({
      id: first.id,
      status: 'cancelled',
      cancelled: false,
    });
    const none = await crewline('runs', 'list', '--status', 'running');
    expect(none.stdout).toMatch(/^No running runs in postgres:\/\/\S+\n$/);
  });

  it('says what is wrong: a missing run, a module path for a name, no location, no subcommand', async () => {
    const missing = await crewline('runs', 'show', 'no-such-run');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no run no-such-run');
    const path = await crewline('runs', 'enqueue', './crews/report.ts');
    expect(path.code).toBe(2);
    expect(path.stderr).toContain('not a module path');
    const noLocation = await runCommand(['runs', 'list'], { cwd: project, env: {} });
    expect(noLocation.code).toBe(2);
    expect(noLocation.stderr).toContain('CREWLINE_WORKER_LOCATION');
    expect((await crewline('runs')).code).toBe(2);
    // Found by a trial: `show ''` printed "no run  in …", --limit 0 printed "No runs" beside 15,
    // and --priority high printed zod's "expected number, received NaN".
    const empty = await crewline('runs', 'show', '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('needs a run id');
    const none = await crewline('runs', 'list', '--limit', '0');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--limit must be a whole number of at least 1, got "0"');
    const priority = await crewline('runs', 'enqueue', 'report', '--priority', 'high');
    expect(priority.code).toBe(2);
    expect(priority.stderr).toContain('--priority must be a whole number');
    expect(priority.stderr).not.toContain('NaN');
    const help = await runCommand(['--help'], { cwd: project });
    expect(help.stdout).toMatch(/crewline worker\s+take queued runs/);
    expect(help.stdout).toMatch(/crewline runs\s+the queue of runs/);
  });

  it('says why a queued run waits: a worker that does not register its name handed it back', async () => {
    const { run } = JSON.parse(
      (await crewline('runs', 'enqueue', 'slow', '--input', 'topic=tides', '--json')).stdout,
    );
    const previousSink = setLogSink(null);
    // Registers only `report`: before, it failed the run for good ("no crew or flow is registered as").
    const worker = new Worker({
      location: url,
      runs: { crews: { report: () => undefined as never } },
      pollIntervalMs: 100,
      retryDelayMs: 200,
    });
    try {
      await worker.start();
      let shown = await crewline('runs', 'show', run.id, '--json');
      for (let waited = 0; JSON.parse(shown.stdout).passedOver === null && waited < 20_000; waited += 100) {
        await sleep(100);
        shown = await crewline('runs', 'show', run.id, '--json');
      }
      expect(JSON.parse(shown.stdout)).toMatchObject({
        status: 'queued',
        attempts: 0,
        failures: 0,
        passedOver: { registered: ['report'] },
      });
    } finally {
      await worker.stop();
      setLogSink(previousSink);
    }
    const text = await crewline('runs', 'show', run.id);
    expect(text.stdout).toContain('status     queued');
    expect(text.stdout).toMatch(
      new RegExp(
        `status     queued, waiting for a worker that registers "slow" \\(worker \\w+ on .*, pid ${process.pid} registers "report"; handed back \\d+ time\\(s\\)`,
      ),
    );
    const listed = await crewline('runs', 'list', '--status', 'queued');
    expect(listed.stdout).toContain(`run ${run.id}: waiting for a worker that registers "slow"`);
    await crewline('runs', 'cancel', run.id);
  });

  it("shows a fork's own model calls and cost, and the forked run's apart", async () => {
    // Registered by id: the fork rebuilds the crew from the checkpoint, which names the model.
    const model = offlineModel({ name: 'runs-show-fork' });
    registerProject({ models: { 'runs-show-fork:model': model } });
    const crew = () => {
      const writer = new Agent({ role: 'Writer', goal: 'Write on {topic}', backstory: 'Plain', llm: model });
      return new Crew({
        name: 'pair',
        agents: [writer],
        tasks: ['Outline {topic}', 'Write on {topic}', 'Review {topic}'].map(
          (description) => new Task({ description, expectedOutput: 'A line', agent: writer }),
        ),
      });
    };
    const queue = new RunQueue({ location: url });
    const worker = new Worker({ location: url, runs: { crews: { pair: crew } }, pollIntervalMs: 100 });
    let run: { id: string };
    let fork: { id: string };
    try {
      await worker.start();
      run = (await queue.enqueue('pair', { inputs: { topic: 'tides' } })).run;
      await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
      fork = await queue.fork(run.id, { taskOutputs: { 1: 'EDITED' } });
      const [ended] = await queue.waitForEnd([fork.id], { timeoutMs: 30_000 });
      expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed' });
    } finally {
      await worker.stop();
      await queue.close();
    }
    const source = await crewline('runs', 'show', run.id);
    expect(source.stdout).toContain('progress   3 model call(s)');
    expect(source.stdout).not.toContain('inherited  ');
    const shown = await crewline('runs', 'show', fork.id);
    // Before: "progress   4 model call(s)", the forked run's 3 counted again.
    expect(shown.stdout).toContain('progress   this run: 1 model call(s)');
    expect(shown.stdout).toContain('cost       this run: $0');
    expect(shown.stdout).toMatch(
      new RegExp(
        `inherited  3 model call\\(s\\), \\d+ tokens, cost \\$0.*: run ${run.id}'s, up to the checkpoint this run was forked from; not counted above \\(with them: 4 model call\\(s\\)`,
      ),
    );
    const json = JSON.parse((await crewline('runs', 'show', fork.id, '--json')).stdout);
    expect(json.progress).toMatchObject({ modelCalls: 1, beforeFork: { runId: run.id, modelCalls: 3 } });
  });

  it('warns when the config here registers runs but not the name enqueued, and queues it still', async () => {
    const withConfig = mkdtempSync(join(tmpdir(), 'crewline-cli-runs-config-'));
    try {
      writeFileSync(
        join(withConfig, 'crewline.config.mjs'),
        'export default { runs: { crews: { report: () => undefined } } };\n',
      );
      const enqueue = (name: string) =>
        runCommand(['runs', 'enqueue', name, '--json'], {
          cwd: withConfig,
          env: { CREWLINE_WORKER_LOCATION: url },
        });
      const typo = await enqueue('reprot');
      expect(typo.code).toBe(0);
      const { run } = JSON.parse(typo.stdout);
      expect(run).toMatchObject({ name: 'reprot', status: 'queued' });
      expect(typo.stderr).toBe(
        `crewline warn [runs] crewline.config.mjs here registers no crew or flow named "reprot" (registered: report); it is queued for a worker whose config registers it: check the name, or cancel it with crewline runs cancel ${run.id}\n`,
      );
      const registered = await enqueue('report');
      expect(registered.code).toBe(0);
      expect(registered.stderr).toBe('');
    } finally {
      rmSync(withConfig, { recursive: true, force: true });
    }
  });

  it('queues a run whose input nothing seen here uses, and warns with the run id to cancel it', async () => {
    // Under this package's node_modules, so that the config resolves @crewline/runtime; a .ts config,
    // which the CLI loads itself (the workspace's runtime is TypeScript source).
    const withCrew = join(
      new URL('../../node_modules/.crewline-test/', import.meta.url).pathname,
      `runs-unused-input-${process.pid}`,
    );
    mkdirSync(withCrew, { recursive: true });
    try {
      writeFileSync(
        join(withCrew, 'crewline.config.ts'),
        `import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
const planner = new Agent({ role: 'Planner', goal: 'Outline {topic}', backstory: 'Brief', llm: offlineModel() });
export default { runs: { crews: { report: () => new Crew({ name: 'report', agents: [planner], tasks: [new Task({ description: 'Outline {topic}', expectedOutput: 'Headings', agent: planner })] }) } } };
`,
      );
      const result = await runCommand(
        ['runs', 'enqueue', 'report', '--input', 'topic=tides', '--input', 'channel=#ops', '--json'],
        { cwd: withCrew, env: { CREWLINE_WORKER_LOCATION: url } },
      );
      expect(result.code, result.stderr).toBe(0);
      const { run } = JSON.parse(result.stdout);
      expect(run).toMatchObject({ name: 'report', status: 'queued', inputs: { channel: '#ops' } });
      expect(result.stderr).toBe(
        `crewline warn [runs] input "channel" is no placeholder of crew "report" of crewline.config.ts and its factory does not read it (placeholders: {topic}); a task callback or a tool may read it, and the runtime ignores an input nothing uses, so the run is queued: check the spelling, or cancel it with crewline runs cancel ${run.id}\n`,
      );
    } finally {
      rmSync(withCrew, { recursive: true, force: true });
    }
  });
});
