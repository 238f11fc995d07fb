import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from './test-support/run-command.js';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));

let directory: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

// The README's `pnpm crewline …` typed in a project outside the repository (`pnpm --dir <repository>`):
// the script runs in the caller's directory, where no tsx is installed, so it must find tsx itself.
describe('the repository root `crewline` script', () => {
  it('runs the CLI from a directory outside the repository, in that directory', () => {
    const result = spawnSync(
      'pnpm',
      ['--silent', '--dir', repositoryRoot, 'crewline', 'checkpoint', 'list'],
      {
        cwd: directory.path,
        encoding: 'utf8',
        // Without INIT_CWD from a pnpm this test may run under, pnpm sets it to the temporary directory.
        env: { ...process.env, INIT_CWD: undefined, NO_COLOR: '1' },
      },
    );
    expect(result.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    // The caller's directory has no checkpoints: the CLI itself answers, about that directory.
    expect(result.stderr).toMatch(/^crewline: /);
    expect(result.stderr).toContain('.checkpoints');
  }, 30_000);
});
