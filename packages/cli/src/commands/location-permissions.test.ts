import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFixture } from '../test-support/fixtures.js';
import { type ProcessResult, runCrewlineProcess } from '../test-support/subprocess.js';

// Root reads any file: as root, the CLI runs as `nobody` to meet the permissions a user would.
const asRoot = process.getuid?.() === 0;
const nobody = 65_534;

/** `crewline <args>` from source in a child that is not allowed to read the locations below. */
function crewlineWithoutPermission(args: readonly string[], cwd: string): Promise<ProcessResult> {
  return runCrewlineProcess(args, { cwd, env: { HOME: cwd }, ...(asRoot ? { uid: nobody } : {}) });
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

// The trial: a .db this user may not read was reported as "does not exist; check the path", and a
// JSON directory without read permission printed its EACCES twice (a sweep warning, then the error).
describe.skipIf(process.platform === 'win32')('a location this user may not read', () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'crewline-cli-permissions-'));
    // The child (nobody, when the tests run as root) must reach the locations to be refused by them.
    await chmod(directory, 0o755);
    for (const kind of ['json', 'sqlite'] as const) {
      const fixture = await writeFixture(kind, directory);
      await fixture.provider.close?.();
      await chmod(fixture.location, 0o000);
    }
  });
  afterAll(async () => {
    await chmod(join(directory, '.checkpoints'), 0o755).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  });

  it('a .db: "cannot be opened: permission denied", exit code 4, not "does not exist"', async () => {
    const result = await crewlineWithoutPermission(['checkpoint', 'list', '.checkpoints.db'], directory);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain(
      `database "${join(directory, '.checkpoints.db')}" cannot be opened: permission denied (EACCES); give this user read permission`,
    );
    expect(result.stderr).not.toContain('does not exist');
  }, 60_000);

  it('a JSON directory: its error printed once, exit code 4', async () => {
    const result = await crewlineWithoutPermission(['checkpoint', 'list', '.checkpoints'], directory);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain(`cannot list checkpoint directory "${join(directory, '.checkpoints')}"`);
    expect(occurrences(result.stderr, 'permission denied'), result.stderr).toBe(1);
    expect(result.stderr).not.toContain('could not sweep');
  }, 60_000);
});
