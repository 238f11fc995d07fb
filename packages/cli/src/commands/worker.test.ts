import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
// The Postgres server of provider-postgres's own tests (see vitest.config.ts), through the workspace.
import type {} from '../../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '../../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';
import { runCrewlineProcess, sourceCommand } from '../test-support/subprocess.js';
import { hasTmux, TmuxSession } from '../test-support/tmux-session.js';

// The project lives under this package's node_modules so that its crewline.config.ts resolves
// `@crewline/runtime` and `@crewline/worker` as a user's project resolves its installed copies.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;
const signalRecorder = fileURLToPath(
  new URL('../test-support/signal-listener-recorder.mjs', import.meta.url),
);

// Two tasks a run; `pace: 'slow'` runs take 1.5 s a model call, so a SIGTERM finds one in flight.
const config = `import { Agent, Crew, defineConfig, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { defineRuns } from '@crewline/worker';

const fast = offlineModel({ name: 'cli-worker-fast', latencyMs: 300 });
const slow = offlineModel({ name: 'cli-worker-slow', latencyMs: 1500 });

export default {
  ...defineConfig({ models: { 'cli-worker:fast': fast, 'cli-worker:slow': slow } }),
  runs: defineRuns({
    crews: {
      report: (run) => {
        const writer = new Agent({
          role: 'Writer',
          goal: 'Write about {topic}',
          backstory: 'Plain',
          llm: run.inputs.pace === 'slow' ? slow : fast,
        });
        return new Crew({
          name: 'report',
          agents: [writer],
          tasks: [
            new Task({ description: 'Outline {topic}', expectedOutput: 'An outline', agent: writer }),
            new Task({ description: 'Write on {topic}', expectedOutput: 'A page', agent: writer }),
          ],
        });
      },
    },
  }),
};
`;

interface Run {
  id: string;
  name: string;
  status: string;
  attempts: number;
  output: string | null;
  currentTask: string | null;
  tokens: { total: number };
  lineageId: string | null;
  lastCheckpoint: string | null;
}

describeWithPostgres('crewline worker (a real process, against the real server)', () => {
  const project = join(projects, `worker-${process.pid}`);
  let url: string;
  let worker: ChildProcess | undefined;
  const crewline = async (...args: string[]) => {
    const result = await runCrewlineProcess(args, {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: url },
    });
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(document)[0]).toBe('schemaVersion');
    expect(document.schemaVersion).toBe(1);
    return document;
  };
  const enqueue = async (...args: string[]) =>
    (await crewline('runs', 'enqueue', 'report', '--create', ...args, '--json')) as {
      created: boolean;
      run: Run;
    };
  const list = async () => ((await crewline('runs', 'list', '--json')) as { runs: Run[] }).runs;
  const show = async (id: string) => (await crewline('runs', 'show', id, '--json')) as unknown as Run;

  beforeAll(async () => {
    url = temporaryLocation();
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), config);
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await dropLocation(url);
    const schema = new URL(url).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    await rm(project, { recursive: true, force: true });
  });

  it('takes enqueued runs two at a time, shows their progress, hands a run back on SIGTERM and exits 0', async () => {
    const first = await enqueue('--input', 'topic=tides', '--idempotency-key', 'order-17');
    expect(first).toMatchObject({ created: true, run: { status: 'queued', inputs: { topic: 'tides' } } });
    const again = await enqueue('--input', 'topic=other', '--idempotency-key', 'order-17');
    expect(again).toMatchObject({ created: false, run: { id: first.run.id } });
    const second = await enqueue('--input', 'topic=winds');
    const third = await enqueue('--input', 'topic=rivers');
    // A queued run cancelled before any worker starts is never taken.
    const cancelledEarly = await enqueue('--input', 'topic=never');
    expect(await crewline('runs', 'cancel', cancelledEarly.run.id, '--json')).toMatchObject({
      id: cancelledEarly.run.id,
      status: 'cancelled',
    });
    const completedIds = [first.run.id, second.run.id, third.run.id];

    const lines: string[] = [];
    let stderr = '';
    const signalLog = join(project, 'signal-listeners.log');
    worker = spawn(
      process.execPath,
      ['--import', signalRecorder, ...sourceCommand(['worker', '--concurrency', '2', '--json'])],
      {
        cwd: project,
        env: {
          ...process.env,
          NO_COLOR: '1',
          CREWLINE_WORKER_LOCATION: url,
          CREWLINE_SIGNAL_LISTENER_LOG: signalLog,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let buffered = '';
    worker.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const complete = buffered.split('\n');
      buffered = complete.pop()!;
      lines.push(...complete);
    });
    worker.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => worker!.on('close', (code) => resolve(code)));
    const events = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const waitFor = async (found: () => boolean, what: string, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!found()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; worker stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };

    const deadline = Date.now() + 90_000;
    let runs = await list();
    while (!completedIds.every((id) => runs.find((run) => run.id === id)?.status === 'completed')) {
      if (Date.now() > deadline) throw new Error(`runs not completed: ${JSON.stringify(runs)}; ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      runs = await list();
    }
    expect(runs.find((run) => run.id === cancelledEarly.run.id)?.status).toBe('cancelled');

    for (const id of completedIds) {
      const shown = await show(id);
      expect(shown).toMatchObject({ id, status: 'completed', attempts: 1, error: null });
      expect(shown.output).toMatch(/\S/);
      expect(shown.tokens.total).toBeGreaterThan(0);
      expect(shown.lineageId).toMatch(/\S/);
      expect(shown.lastCheckpoint).toMatch(/\S/);
      // Read from the run's checkpoints: both tasks' model calls, and their tokens.
      const { progress } = shown as unknown as {
        progress: { modelCalls: number; tokens: { total: number } };
      };
      expect(progress.modelCalls).toBe(2);
      expect(progress.tokens.total).toBe(shown.tokens.total);
    }

    // A task number the run does not have is refused before anything is queued, in one line that
    // numbers tasks from 1 as --set-output does.
    const refused = await runCrewlineProcess(['runs', 'fork', first.run.id, '--set-output', '3=x'], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: url },
    });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/task 3 is out of range: .* numbered 1 to 2$/),
    ]);
    // Changed inputs alone reach no task of the completed run: nothing would run, so nothing is queued.
    const idle = await runCrewlineProcess(['runs', 'fork', first.run.id, '--input', 'topic=reefs'], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: url },
    });
    expect(idle.code, idle.stderr).toBe(2);
    expect(idle.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /nothing to run: every task of crew "\S+" is completed and no edit makes one run again/,
      ),
    ]);
    // An input the run does not know, said with the flag to type (the trial: `fork("<run id>"): …
    // (did you mean "topic"?)`).
    const typo = await runCrewlineProcess(
      ['runs', 'fork', first.run.id.slice(0, 8), '--input', 'topik=kelp'],
      {
        cwd: project,
        env: { CREWLINE_WORKER_LOCATION: url },
      },
    );
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toBe(
      'crewline: input "topik" is not one the run knows (known: topic); check its spelling (did you mean --input topic=…?), or queue a new run for new inputs with crewline runs enqueue\n',
    );
    expect(await list()).toHaveLength(4);

    // A finished run forked with an edited first task: only the second task is asked again, on a
    // lineage of its own; `runs show` names the fork and prints the command that inspects its
    // checkpoints, which works as printed (with PGPASSWORD, as no reference carries the password).
    const forked = (await crewline(
      'runs',
      'fork',
      first.run.id,
      '--set-output',
      '1=EDITED OUTLINE',
      '--input',
      'topic=kelp',
      '--json',
    )) as { run: Run & { forkOf: string } };
    expect(forked.run).toMatchObject({ status: 'queued', forkOf: first.run.id, inputs: { topic: 'kelp' } });
    const forkDeadline = Date.now() + 60_000;
    while ((await show(forked.run.id)).status !== 'completed') {
      if (Date.now() > forkDeadline) throw new Error(`fork not completed; ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const forkShown = await show(forked.run.id);
    expect(forkShown.lineageId).not.toBe((await show(first.run.id)).lineageId);
    const text = await runCrewlineProcess(['runs', 'show', forked.run.id], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: url },
    });
    expect(text.stdout).toContain(`fork of    ${first.run.id}`);
    const inspect = /^inspect {4}crewline checkpoint info '?([^'\n]+)'?$/m.exec(text.stdout);
    expect(inspect?.[1]).toBe(forkShown.lastCheckpoint);
    const info = await runCrewlineProcess(['checkpoint', 'info', inspect![1]!, '--json'], {
      cwd: project,
      env: { PGPASSWORD: decodeURIComponent(new URL(url).password) },
    });
    expect(info.code, info.stderr).toBe(0);
    const document = JSON.parse(info.stdout) as { lineageId?: string; tasks?: unknown };
    expect(JSON.stringify(document)).toContain(forkShown.lineageId!);
    expect(JSON.stringify(document)).toContain('EDITED OUTLINE');

    // `runs open` puts the fork's checkpoints, and only those, in the checkpoint browser: its own
    // branch, none of the other runs' (all on main). In a real terminal (tmux), as a user opens it.
    expect(text.stdout).toContain(`browse     crewline runs open ${forked.run.id}`);
    if (hasTmux) {
      const browser = new TmuxSession(['runs', 'open', forked.run.id], {
        cwd: project,
        width: 160,
        height: 40,
        env: { NO_COLOR: '1', CREWLINE_WORKER_LOCATION: url },
      });
      try {
        const screen = await browser.waitForScreen(
          (current) => current.includes(`runs/${forked.run.id}`),
          "the fork's branch in the browser",
        );
        expect(screen).toContain(`lineage ${forkShown.lineageId}`);
        expect(screen).not.toMatch(/\bmain\b/);
        await browser.send('q');
        expect(await browser.exitStatus()).toBe('0');
      } finally {
        browser.kill();
      }
    }

    // Every line of `worker --json` is a document of its own with its schemaVersion.
    const seen = events();
    expect(
      seen.every((event) => event.schemaVersion === 1 && Object.keys(event)[0] === 'schemaVersion'),
    ).toBe(true);
    expect(seen[0]).toMatchObject({ event: 'started', concurrency: 2 });
    const holds = seen.filter((event) => event.event === 'claimed' || event.event === 'released');
    // The three runs and the fork.
    expect(holds.filter((event) => event.event === 'claimed').map((event) => event.runId)).toHaveLength(4);
    expect(
      holds.filter((event) => event.event === 'released').map((event) => [event.runId, event.outcome]),
    ).toEqual(expect.arrayContaining(completedIds.map((id) => [id, 'completed'])));
    // Concurrency 2: the second run was taken before the first one ended, the third only after.
    expect(holds.slice(0, 2).map((event) => event.event)).toEqual(['claimed', 'claimed']);
    expect(holds[2]).toMatchObject({ event: 'released' });
    expect(holds.map((event) => event.runId)).not.toContain(cancelledEarly.run.id);

    // A deploy: SIGTERM while a slow run's model call is in flight hands the run back, exit 0.
    const slow = await enqueue('--input', 'topic=deploys', '--input', 'pace=slow');
    await waitFor(
      () => events().some((event) => event.event === 'claimed' && event.runId === slow.run.id),
      'the slow run to be taken',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    const last = events();
    expect(last.find((event) => event.event === 'stopping')).toMatchObject({
      signal: 'SIGTERM',
      runs: [slow.run.id],
    });
    expect(last).toContainEqual(
      expect.objectContaining({ event: 'released', runId: slow.run.id, outcome: 'handed-back' }),
    );
    expect(last.at(-1)).toMatchObject({ event: 'stopped' });
    // One SIGTERM, one owner: the worker's listener and, while a run is active, the runtime's (which
    // checkpoints and gives up the lineage lease); the command itself does not listen too. Hence one
    // 'stopping' line and one hand-back, and no listener-leak warning.
    expect((await readFile(signalLog, 'utf8')).trim().split('\n').map(Number)).toEqual([2]);
    expect(last.filter((event) => event.event === 'stopping')).toHaveLength(1);
    expect(last.filter((event) => event.outcome === 'handed-back')).toHaveLength(1);
    expect(stderr).not.toContain('MaxListenersExceededWarning');
    const handedBack = await show(slow.run.id);
    // Back in the queue at once (not a failure), with its first task's completion checkpointed.
    expect(handedBack).toMatchObject({ status: 'queued', attempts: 1, failures: 0 });
    expect(handedBack.lastCheckpoint).toMatch(/\S/);

    // `runs cancel` on that queued run: no worker will take it.
    expect(await crewline('runs', 'cancel', slow.run.id, '--json')).toMatchObject({
      id: slow.run.id,
      status: 'cancelled',
    });
    expect((await show(slow.run.id)).status).toBe('cancelled');
  }, 240_000);
});
