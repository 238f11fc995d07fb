import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
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

// A flow that drafts, asks a person whether to publish, and publishes with the answer.
const config = `import { Flow, listen, start } from '@crewline/runtime';
import { defineRuns } from '@crewline/worker';

class Approval extends Flow {
  initialState = { topic: '', verdict: '' };

  @start()
  draft() {
    return 'a draft on ' + this.state.topic;
  }

  @listen('draft')
  async review(draft) {
    this.state.verdict = await this.ask('Publish ' + draft + '?', { kind: 'input' });
    return draft + ': ' + this.state.verdict;
  }
}

export default { runs: defineRuns({ flows: { approval: Approval } }) };
`;

interface Run {
  id: string;
  status: string;
  attempts: number;
  worker: string | null;
  output: string | null;
  question: { methodName: string; message: string; kind: string } | null;
  humanInput: string | null;
}

describeWithPostgres('crewline runs resume (real processes, against the real server)', () => {
  const project = join(projects, `runs-resume-${process.pid}`);
  let url: string;
  let worker: ChildProcess | undefined;
  const crewline = (...args: string[]) =>
    runCrewlineProcess(args, { cwd: project, env: { CREWLINE_WORKER_LOCATION: url } });
  const json = async (...args: string[]) => {
    const result = await crewline(...args, '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const show = async (id: string) => (await json('runs', 'show', id)) as unknown as Run;
  const until = async (id: string, status: string) => {
    const deadline = Date.now() + 60_000;
    for (let run = await show(id); ; run = await show(id)) {
      if (run.status === status) return run;
      if (Date.now() > deadline) throw new Error(`run ${id} is ${run.status}, not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };

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

  it('shows a paused run with its question, and resume --answer continues it in the worker with that answer', async () => {
    const { run } = (await json('runs', 'enqueue', 'approval', '--create', '--input', 'topic=kelp')) as {
      run: Run;
    };
    let stderr = '';
    worker = spawn(process.execPath, sourceCommand(['worker', '--json']), {
      cwd: project,
      env: { ...process.env, NO_COLOR: '1', CREWLINE_WORKER_LOCATION: url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    worker.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });

    const paused = await until(run.id, 'paused').catch((error: Error) => {
      throw new Error(`${error.message}; worker stderr: ${stderr}`);
    });
    expect(paused).toMatchObject({
      worker: null,
      humanInput: null,
      question: { methodName: 'review', message: 'Publish a draft on kelp?', kind: 'input' },
    });
    const text = await crewline('runs', 'show', run.id);
    expect(text.stdout).toContain('question   review: Publish a draft on kelp?');
    expect(text.stdout).toContain(`answer     crewline runs resume ${run.id} --answer "..."`);

    const missing = await crewline('runs', 'resume', run.id);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('--answer');

    const resumed = (await json('runs', 'resume', run.id, '--answer', 'yes, publish')) as { run: Run };
    expect(resumed.run).toMatchObject({ id: run.id, status: 'queued', humanInput: 'yes, publish' });
    const ended = await until(run.id, 'completed');
    expect(ended).toMatchObject({ attempts: 2, output: 'a draft on kelp: yes, publish' });

    // An ended run waits for no answer: a one-line error naming the status, not a stack.
    const refused = await crewline('runs', 'resume', run.id, '--answer', 'again');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('is completed, not paused');
    expect(refused.stderr).not.toContain('    at ');
  }, 120_000);
});
