import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from './test-support/run-command.js';

// A new user's typo of a command name: the refusal names the command meant, as an unknown option does.
describe('an unknown command', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  beforeAll(async () => {
    directory = await temporaryDirectory();
  });
  afterAll(async () => {
    await directory?.remove();
  });

  it('an unknown checkpoint subcommand names the closest one, exit code 2', async () => {
    const result = await runCommand(['checkpoint', 'lst'], { cwd: directory.path });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('unknown checkpoint command "lst" (did you mean list?)');
    expect(result.stderr).toContain('crewline checkpoint --help');
  });

  it('an unknown top-level command names the closest one, exit code 2', async () => {
    const result = await runCommand(['chekpoint', 'list'], { cwd: directory.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "chekpoint" (did you mean checkpoint?)');
  });

  it('a word close to no command gets no guess', async () => {
    const result = await runCommand(['checkpoint', 'frobnicate'], { cwd: directory.path });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('did you mean');
  });
});
