import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from './test-support/run-command.js';
import { sourceCommand } from './test-support/subprocess.js';

const recorder = fileURLToPath(new URL('./test-support/module-load-recorder.mjs', import.meta.url));

let directory: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

/** Runs `crewline <args>` from source in a child node and returns the URLs of the modules it loaded. */
function loadedModules(args: readonly string[]): { stdout: string; modules: string[] } {
  const logFile = join(directory.path, 'modules.log');
  const [conditions, importFlag, tsx, ...rest] = sourceCommand(args);
  const result = spawnSync(
    process.execPath,
    [conditions!, importFlag!, tsx!, '--import', recorder, ...rest],
    {
      cwd: directory.path,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', CREWLINE_MODULE_LOAD_LOG: logFile },
    },
  );
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return { stdout: result.stdout, modules: readFileSync(logFile, 'utf8').trimEnd().split('\n') };
}

describe('crewline startup', () => {
  it('help and version print the usage and the version', async () => {
    const help = await runCommand(['--help'], { cwd: directory.path });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('crewline checkpoint list');
    expect(help.stdout).toContain('Exit codes');
    const listHelp = await runCommand(['checkpoint', 'list', '--help'], { cwd: directory.path });
    expect(listHelp.stdout).toContain('Usage: crewline checkpoint list');
    const version = await runCommand(['--version'], { cwd: directory.path });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([['--help'], ['--version']])(
    '%s loads neither the library (runtime-state) nor zod nor superjson',
    (flag) => {
      const { stdout, modules } = loadedModules([flag]);
      expect(stdout.length).toBeGreaterThan(0);
      // The recorder saw the CLI itself, so an empty list cannot pass for a fast start.
      expect(modules.some((url) => url.endsWith('/cli/src/main.ts'))).toBe(true);
      const heavy = modules.filter((url) => /\/(runtime-state|zod|superjson)\//.test(url));
      expect(heavy).toEqual([]);
    },
  );
});
