import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// A damaged checkpoint no other names as its parent: the listing leaves its file out, and before
// providers reported what they left out, nothing showed it and its short id named nothing.
describe('a damaged JSON checkpoint that is nobody’s parent', () => {
  let project: { path: string; remove: () => Promise<void> };
  let fixture: Fixture;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    fixture = await writeFixture('json', project.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await project.remove();
  });

  for (const [damage, cut] of [
    ['cut inside its metadata', (text: string) => text.slice(0, 100)],
    ['cut after its first two lines', (text: string) => text.split('\n').slice(0, 2).join('\n')],
  ] as const) {
    it(`${damage}: list shows its row, and its short id names it (exit 4 with the cause)`, async () => {
      const target = fixture.main.at(-1)!;
      const text = await readFile(target.reference, 'utf8');
      await writeFile(target.reference, cut(text));
      try {
        const listed = await crewline('checkpoint', 'list');
        expect(listed.code).toBe(0);
        const lines = listed.stdout.trimEnd().split('\n');
        expect(lines[0]).toMatch(/^6 checkpoints of 2 runs and 1 unreadable /);
        expect(lines).toHaveLength(3 + 7);
        const row = lines.find((line) => line.startsWith(target.id));
        expect(row).toMatch(/\smain\s+[0-9a-f]{8}\s+-\s+\(unreadable\)$/);
        const json = JSON.parse((await crewline('checkpoint', 'list', '--json')).stdout) as {
          count: number;
          unreadable: { id: string; reason: string }[];
        };
        expect(json.count).toBe(6);
        expect(json.unreadable.map((entry) => entry.id)).toEqual([target.id]);
        expect(json.unreadable[0]!.reason).toMatch(/not valid JSON/);
        // Not a checkpoint of any run: --run leaves it out.
        const ofRun = await crewline('checkpoint', 'list', '--run', target.lineageId.slice(0, 8));
        expect(ofRun.stdout).not.toContain(target.id);
        const other = fixture.main[0]!.id;
        for (const short of [target.id.slice(-8), target.id.slice(0, -2)]) {
          for (const args of [
            ['info', short],
            ['resume', short],
            ['fork', short],
            ['diff', short, other],
          ]) {
            const result = await crewline('checkpoint', ...args);
            expect(result.code, args.join(' ')).toBe(4);
            expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
              new RegExp(
                `^crewline: checkpoint ${target.id} in \\./\\.checkpoints is unreadable: .*not valid JSON`,
              ),
            );
          }
        }
      } finally {
        await writeFile(target.reference, text);
      }
    });
  }

  it('a checkpoint file of a newer format version, given by path, is refused naming its id and file, and the fix', async () => {
    const target = fixture.main.at(-1)!;
    const text = await readFile(target.reference, 'utf8');
    await writeFile(target.reference, text.replace(/"formatVersion":\s*1/, '"formatVersion": 99'));
    try {
      for (const command of ['info', 'resume', 'fork']) {
        const result = await crewline('checkpoint', command, target.reference);
        expect(result.code, command).toBe(4);
        const line = result.stderr.trimEnd().split('\n').at(-1)!;
        expect(line).toContain(`checkpoint "${target.id}" (${target.reference}): format version 99 is newer`);
        expect(line).toMatch(/; upgrade crewline \(/);
      }
    } finally {
      await writeFile(target.reference, text);
    }
  });
});
