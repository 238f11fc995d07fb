import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../test-support/run-command.js';

/** A TCP port nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('crewline worker and runs: errors before any server answers', () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'crewline-cli-worker-errors-'));
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('without a crewline.config.ts, says to create one and where to read how', async () => {
    const result = await runCommand(['worker'], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: 'postgres://app@127.0.0.1:1/db' },
    });
    expect(result.stderr).toBe(
      `crewline: no crewline.config.ts in ${project}: create one that registers your crews (see "Two commands" in the README of @crewline/worker, node_modules/@crewline/worker/README.md)\n`,
    );
    expect(result.code).toBe(1);
  });

  it('with a config that registers no runs, says to export them', async () => {
    const directory = mkdtempSync(join(project, 'no-runs-'));
    writeFileSync(join(directory, 'crewline.config.mjs'), 'export default {};\n');
    const result = await runCommand(['worker'], {
      cwd: directory,
      env: { CREWLINE_WORKER_LOCATION: 'postgres://app@127.0.0.1:1/db' },
    });
    expect(result.stderr).toContain(`crewline.config.mjs in ${directory} registers no runs`);
    expect(result.code).toBe(1);
  });

  // Malformed values are usage errors (2), as the exit-code table says: both exited 1 before.
  describe('malformed values exit 2', () => {
    let configured: string;
    beforeAll(() => {
      configured = mkdtempSync(join(project, 'runs-'));
      writeFileSync(join(configured, 'crewline.config.mjs'), 'export default { runs: {} };\n');
    });

    it.each([
      [['worker', '--location', '/tmp/x.db'], /location "\/tmp\/x\.db" is not a postgres:\/\/ URL/],
      [['runs', 'list', '--location', 'x.db'], /location "x\.db" is not a postgres:\/\/ URL/],
      [['worker', '--location', 'sqlite://x.db'], /is not a postgres:\/\/ URL/],
      [['worker', '--concurrency', '0'], /--concurrency must be a whole number of at least 1, got "0"/],
    ])('crewline %j', async (args, message) => {
      const result = await runCommand(args, {
        cwd: configured,
        env: { CREWLINE_WORKER_LOCATION: 'postgres://app@127.0.0.1:1/db' },
      });
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.code).toBe(2);
    });
  });

  it('a server that cannot be reached: exit code 7 (not 4, the unreadable-checkpoint code), host and port named, no password', async () => {
    const port = await closedPort();
    const result = await runCommand(['runs', 'list'], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: `postgres://app:hunter2@127.0.0.1:${port}/db` },
    });
    expect(result.stderr).toMatch(
      new RegExp(
        `^crewline: cannot reach the Postgres server at 127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\)`,
      ),
    );
    expect(result.stderr).not.toContain('hunter2');
    expect(result.code).toBe(7);
  }, 30_000);
});
