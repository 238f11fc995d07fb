import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/provider-postgres/test-support';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCrewlineProcess, sourceCommand } from '../test-support/subprocess.js';

// The project lives under this package's node_modules so that its crewline.config.ts resolves
// `@crewline/runtime` and `@crewline/worker` as a user's project resolves its installed copies.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

// A flow whose one method runs a three-task crew; every model call takes 1.5 s and is logged by the
// process that makes it (CALL_LOG), so the test can tell which worker made which call.
const config = `import { appendFileSync } from 'node:fs';
import { Agent, Crew, Flow, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { defineRuns } from '@crewline/worker';

const model = offlineModel({
  name: 'flow-hand-back',
  latencyMs: (call) => {
    appendFileSync(process.env.CALL_LOG, JSON.stringify({ pid: process.pid, prompt: call.userText }) + '\\n');
    return 1500;
  },
});

class Report extends Flow {
  initialState = { topic: '' };

  @start()
  async write() {
    const writer = new Agent({ role: 'Writer', goal: 'Write on {topic}', backstory: 'Plain', llm: model });
    const crew = new Crew({
      agents: [writer],
      tasks: ['Outline {topic}', 'Draft {topic}', 'Title {topic}'].map(
        (description) => new Task({ description, expectedOutput: 'text', agent: writer }),
      ),
    });
    return (await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
}

export default { runs: defineRuns({ flows: { report: Report } }) };
`;

interface Run {
  id: string;
  status: string;
  attempts: number;
  failures: number;
  output: string | null;
}

describeWithPostgres('crewline worker hands a running flow back on SIGTERM (real processes)', () => {
  const project = join(projects, `worker-flow-${process.pid}`);
  const callLog = join(project, 'calls.log');
  let url: string;
  const workers: ChildProcess[] = [];
  const json = async (...args: string[]) => {
    const result = await runCrewlineProcess([...args, '--json'], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: url },
    });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const startWorker = () => {
    const worker = spawn(process.execPath, sourceCommand(['worker', '--json']), {
      cwd: project,
      env: { ...process.env, NO_COLOR: '1', CREWLINE_WORKER_LOCATION: url, CALL_LOG: callLog },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    workers.push(worker);
    const lines: string[] = [];
    let stderr = '';
    worker.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n')));
    worker.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => worker.on('close', (code) => resolve(code)));
    return { worker, lines, exited, stderr: () => stderr };
  };
  const calls = async () =>
    (await readFile(callLog, 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { pid: number; prompt: string });
  const until = async (found: () => Promise<boolean> | boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!(await found())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    url = temporaryLocation();
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), config);
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await dropLocation(url);
    const schema = new URL(url).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    await rm(project, { recursive: true, force: true });
  });

  it('lets the model call in flight finish, stops the flow, exits 0; another worker continues with no call made twice', async () => {
    const { run } = (await json('runs', 'enqueue', 'report', '--create', '--input', 'topic=tides')) as {
      run: Run;
    };
    const first = startWorker();
    await until(async () => (await calls()).length === 1, 'the first model call');
    first.worker.kill('SIGTERM');
    expect(await first.exited, first.stderr()).toBe(0);
    const released = first.lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { event: string; outcome?: string })
      .filter((event) => event.event === 'released');
    expect(released.map((event) => event.outcome)).toEqual(['handed-back']);
    // The flow stopped after the call in flight: the other two tasks were not started here.
    const byFirst = await calls();
    expect(byFirst).toHaveLength(1);
    expect(await json('runs', 'show', run.id)).toMatchObject({ status: 'queued', attempts: 1, failures: 0 });

    const second = startWorker();
    await until(
      async () => ((await json('runs', 'show', run.id)) as unknown as Run).status === 'completed',
      'the run to complete in the second worker',
    );
    second.worker.kill('SIGTERM');
    const ended = (await json('runs', 'show', run.id)) as unknown as Run;
    expect(ended).toMatchObject({ status: 'completed', attempts: 2, failures: 0 });
    expect(ended.output).toContain('Title tides');
    const all = await calls();
    expect(all).toHaveLength(3);
    expect(new Set(all.map((call) => call.prompt)).size).toBe(3);
    expect(all.slice(1).every((call) => call.pid === second.worker.pid)).toBe(true);
  }, 120_000);
});
