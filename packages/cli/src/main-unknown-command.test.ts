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
    // The trial: the help it pointed to showed only the browser's usage, not the subcommands.
    expect(result.stderr).toContain(
      'the checkpoint commands are list, info, resume, fork, diff, prune, serve, flows',
    );
    expect(result.stderr).toContain('crewline checkpoint --help');
    const help = await runCommand(['checkpoint', '--help'], { cwd: directory.path });
    expect(help.code).toBe(0);
    for (const name of ['list', 'info', 'resume', 'fork', 'diff', 'prune', 'serve', 'flows'])
      expect(help.stdout).toMatch(new RegExp(`^  crewline checkpoint ${name} `, 'm'));
  });

  it('an unknown runs subcommand names the closest one, exit code 2', async () => {
    const result = await runCommand(['runs', 'lst'], { cwd: directory.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('(did you mean list?)');
    const far = await runCommand(['runs', 'frobnicate'], { cwd: directory.path });
    expect(far.code).toBe(2);
    expect(far.stderr).not.toContain('did you mean');
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
