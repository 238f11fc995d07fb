import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The exit codes of the README's table for what a new user passes by mistake or finds damaged.
describe('exit codes of damaged files and unusable locations', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  const crewline = (...args: string[]) => runCommand(['checkpoint', ...args], { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-exit-codes-');
    fixture = await writeFixture('json', project.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await project?.remove();
  });

  const oneLine = (text: string) => {
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toMatch(/^crewline: /);
  };

  it('a 0-byte checkpoint file is a damaged checkpoint (4), as a cut one is', async () => {
    const whole = await readFile(fixture.main[0]!.reference, 'utf8');
    await writeFile(join(project.path, 'cut.json'), whole.slice(0, 100));
    await writeFile(join(project.path, 'empty.json'), '');
    const cut = await crewline('info', 'cut.json');
    expect(cut.code).toBe(4);
    const empty = await crewline('info', 'empty.json');
    expect(empty.code).toBe(4);
    oneLine(empty.stderr);
    expect(empty.stderr).toContain('empty.json');
    expect(empty.stderr).toContain('empty');
  });

  it('a .db file that is not a SQLite database is unreadable (4), said in CLI words', async () => {
    await writeFile(join(project.path, 'garbage.db'), 'garbage\n');
    const result = await crewline('list', 'garbage.db');
    expect(result.code).toBe(4);
    oneLine(result.stderr);
    expect(result.stderr).toContain('garbage.db');
    expect(result.stderr).toContain('not a SQLite database');
    expect(result.stderr).not.toMatch(/SqliteProvider|JsonProvider/);
  });

  it('a file that is no checkpoint location at all is not found (3)', async () => {
    await writeFile(join(project.path, 'README.md'), '# a project\n');
    const listed = await crewline('list', 'README.md');
    expect(listed.code).toBe(3);
    oneLine(listed.stderr);
    expect((await crewline('info', 'README.md')).code).toBe(3);
  });

  it('serve on a port in use cannot start (1): not a usage error', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as { port: number }).port);
      const result = await crewline('serve', '--port', port);
      expect(result.code).toBe(1);
      oneLine(result.stderr);
      expect(result.stderr).toContain(`port ${port}`);
      expect(result.stderr).toContain('is in use');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
