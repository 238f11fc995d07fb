import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The trial: after `pnpm demo` and `pnpm demo --sqlite`, `crewline info <id of the .db run>` answered
// "no checkpoint … in ./.checkpoints" and `list` never mentioned ./.checkpoints.db beside it.
describe('both ./.checkpoints and ./.checkpoints.db in the project', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let json: CrewRun;
  let sqlite: CrewRun;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    json = await writeCrewRun('json', project.path);
    sqlite = await writeCrewRun('sqlite', project.path);
  });
  afterAll(async () => {
    await json?.close();
    await sqlite?.close();
    await project?.remove();
  });

  it('a miss in ./.checkpoints names ./.checkpoints.db when the id is there, for every command taking a reference', async () => {
    const id = sqlite.checkpoints.at(-1)!.id;
    for (const command of ['info', 'resume', 'fork']) {
      const result = await crewline(command, id);
      expect(result.code, command).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.stderr, command).toContain(`${id} is in ./.checkpoints.db`);
      expect(result.stderr, command).toContain('--location ./.checkpoints.db');
    }
    const diff = await crewline('diff', json.checkpoints[0]!.id, id);
    expect(diff.code).toBe(3);
    expect(diff.stderr).toContain(`${id} is in ./.checkpoints.db`);
  });

  it('an id in neither says both were looked in', async () => {
    const result = await crewline('info', '20200101T000000000-deadbeef');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('also looked in ./.checkpoints.db: not there either');
  });

  it('an explicit --location is taken as asked', async () => {
    const result = await crewline('info', sqlite.checkpoints[0]!.id, '--location', '.checkpoints');
    expect(result.code).toBe(3);
    expect(result.stderr).not.toContain('.checkpoints.db');
  });

  it('list of the default location mentions the other store', async () => {
    const result = await crewline('list');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('./.checkpoints.db exists here too');
    expect(result.stdout).toContain('crewline list ./.checkpoints.db');
    const explicit = await crewline('list', '.checkpoints.db');
    expect(explicit.stdout).not.toContain('exists here too');
  });
});
