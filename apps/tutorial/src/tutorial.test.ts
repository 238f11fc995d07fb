import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerProject } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTutorialOptions } from './options.js';
import { runTutorial } from './tutorial.js';

/** The demo in this process (no latency), writing to a temporary directory. */
async function demo(argv: string[], base: string): Promise<string> {
  const { text, code } = await demoOutcome(argv, base);
  expect(code).toBe(0);
  return text;
}

async function demoOutcome(
  argv: string[],
  base: string,
): Promise<{ text: string; code?: number; error?: unknown }> {
  let text = '';
  const stdout = { isTTY: false, write: (chunk: string) => (text += chunk) };
  const env = { CREWLINE_TUTORIAL_LATENCY_MS: '0', NO_COLOR: '1' };
  try {
    const code = await runTutorial(parseTutorialOptions(['--location', join(base, 'cp'), ...argv], env), {
      stdout,
      env,
      baseDirectory: base,
    });
    return { text, code };
  } catch (error) {
    return { text, error };
  }
}

describe('runTutorial', () => {
  let base: string;
  const directory = () => base;
  let firstCheckpoint: string;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'crewline-tutorial-unit-'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('runs both tasks, saying which model it uses and where each checkpoint went', async () => {
    const text = await demo([], base);
    expect(text).toContain(
      'Model:       offline:tutorial (the offline model: no key, no network, 0.0 s per call;',
    );
    expect(text).toContain('Checkpoints: ./cp/ (JSON');
    expect(text).toContain('Requests the offline model received in this run: 2 (Researcher 1, Writer 1).');
    const saved = [...text.matchAll(/Checkpoint saved: (\S+) \(branch main\)/g)].map((match) => match[1]!);
    expect(saved).toHaveLength(2);
    firstCheckpoint = saved[0]!;
    expect(firstCheckpoint).toMatch(/^\.\/cp\/main\/.+_p-none\.json$/);
    // Only the first checkpoint has work left, so only it gets a "continue with" hint.
    expect(text.match(/If you stop now, continue with: pnpm demo --resume/g)).toHaveLength(1);
    expect(text).toContain(`pnpm demo --fork ${firstCheckpoint} --edit-research`);
  });

  it('forks with an edited research output: only the Writer runs, on a new branch', async () => {
    const text = await demo(
      ['--fork', firstCheckpoint, '--edit-research', 'Edited notes.', '--branch', 'b1'],
      base,
    );
    expect(text).toContain('Forking onto branch b1; branch main stays as it is.');
    expect(text).toContain('Task 1 of 2: research (Researcher) was edited before this run');
    expect(text).toContain('Requests the offline model received in this run: 1 (Researcher 0, Writer 1).');
    expect(text).toContain('Research the Writer read on branch b1:   Edited notes.');
    expect(text).toContain('Branch main is untouched: 2 checkpoints, the same as before the fork.');
    expect(text).toMatch(/^ {2}pnpm crewline checkpoint --location \S+ {3}\(terminal browser\)$/m);
    expect(text).toMatch(/^ {2}pnpm crewline checkpoint serve \S+ {8}\(web page\)$/m);
    expect(readdirSync(join(base, 'cp', 'b1'))).toHaveLength(1);
  });

  it('refuses a fork onto a branch that exists before announcing it, naming --branch', async () => {
    // The trial (s8, finding 4): "Forking onto branch b1; branch main stays as it is." came first,
    // then the runtime's refusal naming its `branch` option, which the demo's user never sees.
    const { text, error } = await demoOutcome(['--fork', firstCheckpoint, '--branch', 'b1'], base);
    expect(text).not.toContain('Forking onto branch b1');
    expect(String(error)).toContain('branch "b1" already exists in ./cp');
    expect(String(error)).toContain('--branch');
    expect(String(error)).not.toContain('`branch` option');
    expect(readdirSync(join(base, 'cp', 'b1'))).toHaveLength(1);
  });

  it('resumes the first checkpoint without running the research again', async () => {
    const logs = captureLogs();
    const text = await demo(['--resume', firstCheckpoint], base).finally(() =>
      logs.stop({ allowUnexpected: true }),
    );
    // The first run went on past that checkpoint, so this continues on a new branch and says so.
    expect(logs.expect('is not the latest of its run')).toHaveLength(1);
    expect(logs.unexpected()).toEqual([]);
    // The header says so before the run, rather than "Resuming on branch main." then a warning.
    expect(text).not.toContain('Resuming on branch main.');
    expect(text).toMatch(
      /Resuming an older checkpoint: its run went on to \S+, so this continues on a new branch \(fork\/\.\.\.\) and branch main stays as it is\./,
    );
    expect(text).toMatch(/The Writer's result on branch fork\//);
    expect(text).toContain('1 of 2 tasks done');
    expect(text).toContain('was done in the checkpoint: its saved output is used, it is not run again');
    expect(text).toContain('Requests the offline model received in this run: 1 (Researcher 0, Writer 1).');
  });

  it('forks from the final checkpoint too: the edited research makes the Writer run again', async () => {
    const text = await demo([], join(base, 'second'));
    const last = /Last checkpoint: (\S+)/.exec(text)![1]!;
    const forked = await demo(['--fork', last, '--edit-research', 'Later edit.'], join(base, 'second'));
    expect(forked).toContain('Requests the offline model received in this run: 1 (Researcher 0, Writer 1).');
  });

  it('resumes the newest checkpoint of a run on its own branch, and says so', async () => {
    const text = await demo([], join(base, 'newest'));
    const last = /Last checkpoint: (\S+)/.exec(text)![1]!;
    const resumed = await demo(['--resume', last], join(base, 'newest'));
    expect(resumed).toContain('Resuming on branch main.');
    expect(resumed).toContain("The Writer's result on branch main:");
  });

  it('prints the kind of storage the location calls for: a .db file is SQLite without --sqlite', async () => {
    const text = await demo(['--location', join(base, 'mistake.db')], join(base, 'mistake'));
    expect(text).toContain(`Checkpoints: ${join(base, 'mistake.db')} (SQLite`);
    expect(text).toMatch(/Checkpoint saved: \S+mistake\.db#\S+ \(branch main\)/);
  });

  it('checkpoints a postgres:// location with Postgres, never printing its password', async () => {
    const password = 'S3cretPw';
    // Port 1: nothing listens, so the run stops at its first write to the store, as a wrong
    // password or a server that is down would stop it.
    const location = `postgres://crewline:${password}@127.0.0.1:1/postgres?schema=demo`;
    const postgresBase = join(base, 'postgres');
    mkdirSync(postgresBase);
    const { text, error } = await demoOutcome(['--location', location], postgresBase);
    expect(text).toContain(
      'Checkpoints: postgres://crewline@127.0.0.1:1/postgres?schema=demo (Postgres; the password is never printed',
    );
    expect(error).toBeDefined();
    expect(`${text}\n${String(error)}\n${(error as Error).stack}`).not.toContain(password);
    // Not taken for a path: no directory named after the URL.
    expect(readdirSync(postgresBase)).toEqual([]);
  });

  it('says only the cause when the store refuses the run before any task started', async () => {
    // Port 1: nothing listens, as a URL without the password the server asks for is refused: the
    // run stops before its first task, and running it again as it is cannot help.
    const location = 'postgres://crewline@127.0.0.1:1/postgres?schema=demo';
    const refusedBase = join(directory(), 'refused');
    mkdirSync(refusedBase);
    const { text, error } = await demoOutcome(['--location', location], refusedBase);
    expect(String(error)).toContain('cannot reach the Postgres server');
    expect(text).not.toContain('Task 1 of 2');
    expect(text).not.toContain('No checkpoint was written');
    expect(text).not.toMatch(/run it again/i);
    expect(text).not.toContain('The run failed');
  });

  it('says the first task had not finished when a model call fails before the first checkpoint', async () => {
    registerProject({ models: { 'offline:broken': offlineModel({ name: 'broken', failOn: [1] }) } });
    const { text, error } = await demoOutcome(['--model', 'offline:broken'], join(directory(), 'broken'));
    expect(String(error)).toContain('simulated failure on call 1');
    expect(text).toContain('The run failed (the error is below).');
    expect(text).toContain('No checkpoint was written by this run: its first task had not finished');
  });

  it('says how to continue when a model call fails after the first checkpoint', async () => {
    // A model whose second call fails, the way a rate limit or a dropped connection does.
    registerProject({ models: { 'offline:flaky': offlineModel({ name: 'flaky', failOn: [2] }) } });
    const base = join(directory(), 'flaky');
    const { text, error } = await demoOutcome(['--model', 'offline:flaky'], base);
    expect(String(error)).toContain('simulated failure on call 2');
    expect(text).toContain('The run failed (the error is below).');
    const reference = /^ {2}pnpm demo --resume (\S+)$/m.exec(text)?.[1];
    expect(reference).toMatch(/^\.\/cp\/main\/.+_p-none\.json$/);
    expect(text).toContain(`  pnpm crewline checkpoint resume ${reference}`);
    // The printed command works: only the Writer runs.
    const resumed = await demo(['--resume', reference!, '--model', 'offline:flaky'], base);
    expect(resumed).toContain('Crew finished');
  });
});
