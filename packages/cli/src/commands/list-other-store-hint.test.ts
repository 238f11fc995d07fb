import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// A new-user trial (s11, finding 6): `npx crewline list` in a project with both default stores said
// "list it with crewline list ./.checkpoints.db", which is "command not found" where crewline is run
// by npx; every other hint names the CLI as it was run.
describe('list names the other default store with the CLI as it was run', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let json: CrewRun;
  let sqlite: CrewRun;

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-list-other-store-');
    mkdirSync(join(project.path, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(project.path, 'node_modules', '.bin', 'crewline'), '');
    json = await writeCrewRun('json', project.path);
    sqlite = await writeCrewRun('sqlite', project.path);
  });
  afterAll(async () => {
    await json?.close();
    await sqlite?.close();
    await project?.remove();
  });

  it('npx crewline list', async () => {
    const result = await runCommand(['list'], {
      cwd: project.path,
      env: { npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64', npm_command: 'exec' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      './.checkpoints.db exists here too; list it with npx crewline list ./.checkpoints.db',
    );
  });
});
