import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPostgres, testServerUrl } from '@crewline/provider-postgres/test-support';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sourceCommand } from '../test-support/subprocess.js';

// Inside this package, so that the project's crewline.config.mjs resolves what it imports.
const packageModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

interface Ended {
  code: number | null;
  stderr: string;
  /** Still running when the time was up (then killed). */
  hung: boolean;
  elapsedMs: number;
}

/** `crewline <args>` in a child without PGPASSWORD, killed when it runs past `limitMs`. */
function crewlineWithoutPassword(args: string[], cwd: string, limitMs: number): Promise<Ended> {
  const { PGPASSWORD: _password, ...env } = process.env;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, sourceCommand(args), {
      cwd,
      env: { ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let hung = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, hung, elapsedMs: Date.now() - started });
    });
  });
}

// The queue's pool reported pg's own "SASL: ... client password must be a string" and then kept its
// half-open login: `crewline worker` never ended, `crewline runs list` only when the server gave up
// (authentication_timeout, 60 s). `crewline checkpoint list` on the same URL answers at once.
describeWithPostgres('crewline worker and runs with a URL without the password the server asks for', () => {
  let project: string;
  let location: string;

  beforeAll(() => {
    project = mkdtempSync(join(packageModules, '.crewline-worker-login-'));
    writeFileSync(join(project, 'crewline.config.mjs'), 'export default { runs: {} };\n');
    const url = new URL(testServerUrl()!);
    url.password = '';
    url.searchParams.set('schema', 'worker_login');
    location = url.href;
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('crewline checkpoint list on the same URL says so at once and ends (it said so, then waited 60 s)', async () => {
    const ended = await crewlineWithoutPassword(['checkpoint', 'list', location], project, 20_000);
    expect(ended.hung, `still running after 20 s; stderr: ${ended.stderr}`).toBe(false);
    expect(ended.stderr).toMatch(/asks for a password and none was given/);
    expect(ended.code).toBe(1);
  }, 30_000);

  it.each([[['worker']], [['runs', 'list']]])(
    'crewline %j says a password is needed and exits 1 at once',
    async (args) => {
      const ended = await crewlineWithoutPassword([...args, '--location', location], project, 20_000);
      expect(ended.hung, `still running after 20 s; stderr: ${ended.stderr}`).toBe(false);
      expect(ended.stderr).toMatch(
        /^crewline: the Postgres server of the run queue postgres:\/\/.* asks for a password and none was given; put it in PGPASSWORD \(or ~\/\.pgpass\)/,
      );
      // A URL written out as an example is redacted like a credential: the hint does not spell one.
      expect(ended.stderr).not.toContain('REDACTED');
      expect(ended.stderr).not.toContain('SASL');
      expect(ended.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(ended.code).toBe(1);
      expect(ended.elapsedMs).toBeLessThan(15_000);
    },
    30_000,
  );
});
