import { readFile, rm, writeFile } from 'node:fs/promises';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFakeRun } from '../test-support/fake-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// A location whose only checkpoint is damaged: `list` shows it as unreadable, and `info` (the latest)
// said "no checkpoints ...; run something with checkpointing enabled first" (exit 3), as if it held
// nothing.
describe('a location that holds only an unreadable checkpoint', () => {
  let project: { path: string; remove: () => Promise<void> };
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-info-unreadable-');
    const provider = new JsonProvider();
    const [only, ...others] = await writeFakeRun({
      provider,
      location: `${project.path}/.checkpoints`,
      taskCount: 1,
    });
    await provider.close?.();
    for (const other of others) await rm(other.reference);
    const text = await readFile(only!.reference, 'utf8');
    await writeFile(only!.reference, text.slice(0, 100));
  });
  afterAll(async () => {
    await project.remove();
  });

  it('list shows it as unreadable', async () => {
    const listed = await crewline('checkpoint', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/1 unreadable/);
  });

  it('info says the location holds unreadable checkpoints and how to see them (exit 4)', async () => {
    for (const args of [['info'], ['info', '.checkpoints'], ['resume', '.checkpoints']]) {
      const result = await crewline('checkpoint', ...args);
      expect(result.code, args.join(' ')).toBe(4);
      const line = result.stderr.trimEnd().split('\n').at(-1);
      expect(line).toMatch(
        /^crewline: no readable checkpoint in .*\.checkpoints: 1 checkpoint there cannot be read \(the newest, \S+: .*not valid JSON.*\); see them with `crewline checkpoint list .*\.checkpoints`/,
      );
      expect(result.stderr).not.toContain('run something with checkpointing enabled first');
    }
  });
});
