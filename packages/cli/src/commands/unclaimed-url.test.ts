import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The trial: `list postgress://…` gave no "did you mean postgres://" and ended "or pass a provider",
// which a command-line user cannot do.
describe('a location URL no provider claims', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  beforeAll(async () => {
    directory = await temporaryDirectory();
  });
  afterAll(async () => {
    await directory?.remove();
  });

  it('names the scheme meant and what a command-line user can do, for a location and a reference', async () => {
    for (const args of [
      ['list', 'postgress://me:secret@127.0.0.1:9/db'],
      ['list', '--location', 'postgress://me:secret@127.0.0.1:9/db'],
      ['info', 'postgress://me:secret@127.0.0.1:9/db#abc'],
      ['info', 'abc', '--location=postgress://me:secret@127.0.0.1:9/db'],
    ]) {
      const result = await runCommand(args, { cwd: directory.path });
      expect(result.code, args.join(' ')).toBe(5);
      expect(result.stderr, args.join(' ')).toContain('(did you mean postgres://?)');
      expect(result.stderr).toContain('crewline.config.ts');
      expect(result.stderr).not.toContain('pass a provider');
      expect(result.stderr).not.toContain('secret');
    }
  });

  it('a scheme close to none gets no guess', async () => {
    const result = await runCommand(['list', 'redis://127.0.0.1:9/0'], { cwd: directory.path });
    expect(result.code).toBe(5);
    expect(result.stderr).not.toContain('did you mean');
    expect(result.stderr).not.toContain('pass a provider');
  });
});
