import { statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, type FixtureKind, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

const kinds: FixtureKind[] = ['json', 'sqlite'];

describe.each(kinds)('commands over %s checkpoints', (kind) => {
  let project: { path: string; remove: () => Promise<void> };
  let fixture: Fixture;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    fixture = await writeFixture(kind, project.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await project.remove();
  });

  it('list finds the default location and prints one line per checkpoint', async () => {
    const result = await crewline('checkpoint', 'list');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`7 checkpoints of 2 runs in ./${fixture.relative} (${kind}), oldest first`);
    expect(lines[2]).toMatch(/^ID\s+TIME\s+SIZE\s+TRIGGER\s+BRANCH\s+PARENT\s+RUN\s+PROGRESS$/);
    expect(lines).toHaveLength(3 + 7);
    const last = fixture.main.at(-1)!;
    const row = lines.find((line) => line.startsWith(last.id))!;
    expect(row).toContain('task_completed');
    expect(row).toContain('main');
    expect(row).toContain('crew Research 3/3 tasks');
    expect(row).toContain(` ${last.lineageId.slice(0, 8)} `);
    expect(lines.find((line) => line.startsWith(fixture.fork.id))).toContain('experiment');
  });

  it('list shows each parent and marks siblings: two checkpoints continue one', async () => {
    const lines = (await crewline('checkpoint', 'list')).stdout.trimEnd().split('\n');
    const rowOf = (id: string) => lines.find((line) => line.startsWith(id))!;
    const forkPoint = fixture.main[2]!.id.slice(-8);
    expect(rowOf(fixture.main[0]!.id)).toMatch(/ main {2,}- {2,}/);
    expect(rowOf(fixture.main[1]!.id)).toContain(` ${fixture.main[0]!.id.slice(-8)} `);
    // main[3] and the fork both start from main[2]: the listing says they are siblings.
    expect(rowOf(fixture.main[3]!.id)).toContain(` ${forkPoint} (+1 sibling) `);
    expect(rowOf(fixture.fork.id)).toContain(` ${forkPoint} (+1 sibling) `);
    expect(rowOf(fixture.main[4]!.id)).not.toContain('sibling');
  });

  it('list --run shows one run only, by a prefix of its lineage id', async () => {
    const run = fixture.main[0]!.lineageId.slice(0, 6);
    const result = await crewline('checkpoint', 'list', '--run', run, '--json');
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { checkpoints: { id: string }[] };
    expect(parsed.checkpoints.map((checkpoint) => checkpoint.id)).toEqual(
      fixture.main.map((entry) => entry.id),
    );
    // A run that is not here is a typo, refused as prune refuses it (list-branch.test.ts).
    const none = await crewline('checkpoint', 'list', '--run', 'zzzz');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no run "zzzz"');
  });

  it('list takes the location as an argument, filters by branch and prints JSON', async () => {
    const result = await crewline('list', fixture.relative, '--branch', 'experiment', '--json');
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as {
      provider: string;
      count: number;
      checkpoints: { id: string }[];
    };
    expect(parsed.provider).toBe(kind);
    expect(parsed.checkpoints.map((checkpoint) => checkpoint.id)).toEqual([fixture.fork.id]);
  });

  it('info shows the latest checkpoint by default: lineage, events, inputs, tasks with outputs', async () => {
    const result = await crewline('checkpoint', 'info');
    expect(result.code).toBe(0);
    const latest = fixture.fork;
    expect(result.stdout).toContain(`Checkpoint ${latest.id}`);
    expect(result.stdout).toContain('Branch:    experiment');
    expect(result.stdout).toContain(`Parent:    ${fixture.main[2]!.id}`);
    expect(result.stdout).toMatch(/Events:\s+3/);
    expect(result.stdout).toContain('topic = "AI"');
    expect(result.stdout).toContain('crew Research');
    expect(result.stdout).toContain('2/3 tasks completed');
    expect(result.stdout).toMatch(/1\. \[done\]\s+Research \{topic\} for \{audience\} \(Researcher\)/);
    expect(result.stdout).toContain('-> Output 1: findings about AI. Second line of task 1.');
    expect(result.stdout).toContain('-> Forked output on experiment');
    expect(result.stdout).toMatch(/3\. \[pending\]/);
  });

  it('info resolves a unique id prefix in the default location and prints whole outputs with --full', async () => {
    const target = fixture.main[1]!;
    const prefix = target.id.slice(0, target.id.length - 4);
    const others = [...fixture.main, fixture.fork].filter((checkpoint) => checkpoint.id.startsWith(prefix));
    const unique = others.length === 1 ? prefix : target.id;
    const result = await crewline('info', unique, '--full');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Checkpoint ${target.id}`);
    expect(result.stdout).toContain('| Second line of task 1.');
  });

  it('info reads a checkpoint by its reference and as JSON', async () => {
    const target = fixture.main[3]!;
    const result = await crewline('info', target.reference, '--json');
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as {
      metadata: { id: string };
      inputs: Record<string, unknown>;
      tasks: { index: number; status: string; output?: string }[];
      placeholders: string[];
    };
    expect(parsed.metadata.id).toBe(target.id);
    expect(parsed.inputs).toEqual({ topic: 'AI', audience: 'engineers' });
    expect(parsed.tasks.map((task) => task.status)).toEqual(['completed', 'completed', 'pending']);
    expect(parsed.placeholders).toEqual(['audience', 'topic']);
  });

  it('info marks a parent that is not in the location any more as pruned', async () => {
    const directory = await temporaryDirectory();
    try {
      const own = await writeFixture(kind, directory.path);
      await own.provider.delete(own.provider.resolveLocation(own.location), own.main[0]!.id);
      const run = (...args: string[]) => runCommand(args, { cwd: directory.path });
      const orphan = await run('info', own.main[1]!.id);
      expect(orphan.stdout).toContain(`Parent:    ${own.main[0]!.id} (pruned)`);
      const kept = await run('info', own.main[2]!.id);
      expect(kept.stdout).toContain(`Parent:    ${own.main[1]!.id}\n`);
      const json = JSON.parse((await run('info', own.main[1]!.id, '--json')).stdout) as {
        parentPruned: boolean;
      };
      expect(json.parentPruned).toBe(true);
      await own.provider.close?.();
    } finally {
      await directory.remove();
    }
  });

  it('diff shows what changed between two checkpoints', async () => {
    const [first, , , fourth] = fixture.main;
    const result = await crewline('diff', first!.id, fourth!.id);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`--- ${first!.id}`);
    expect(result.stdout).toContain(`+++ ${fourth!.id}`);
    expect(result.stdout).toMatch(/Events:\s+1 -> 4 \(\+3\)/);
    expect(result.stdout).toContain('1. running -> completed');
    expect(result.stdout).toContain('2. pending -> completed');
    // Task 2's output is new in the fourth: its lines, not one line cut short.
    expect(result.stdout).toContain('     + Output 2: findings about AI.\n     + Second line of task 2.');
    const full = await crewline('diff', first!.id, fourth!.id, '--full');
    expect(full.code).toBe(0);
    expect(full.stdout).toContain('     + Second line of task 2.');
    const json = JSON.parse(
      (await crewline('diff', fixture.main[2]!.id, fixture.fork.id, '--json')).stdout,
    ) as {
      fields: { field: string; to: unknown }[];
    };
    expect(json.fields).toContainEqual(expect.objectContaining({ field: 'branch', to: 'experiment' }));
  });

  it('prune --dry-run reports per run and removes nothing; prune --keep removes the oldest', async () => {
    const dry = await crewline('prune', '--keep', '2', '--dry-run');
    expect(dry.code).toBe(0);
    // Main's oldest four are beyond its newest two, but its third is where the fork started: it stays.
    expect(dry.stdout).toContain('Would remove 3 checkpoints');
    expect(dry.stdout.split('Kept')[0]).not.toContain(fixture.main[2]!.id);
    expect(dry.stdout).toContain(`run ${fixture.main[0]!.lineageId.slice(0, 8)}`);
    expect(dry.stdout).toContain('Nothing was removed (--dry-run).');
    // It says which checkpoint it kept because a fork starts from it, and the fork's branch.
    expect(dry.stdout).toContain('Kept 1 checkpoint that a fork starts from (prune never removes one):');
    expect(dry.stdout).toMatch(new RegExp(`^  ${fixture.main[2]!.id}  .*  forked to experiment$`, 'm'));
    const json = JSON.parse((await crewline('prune', '--keep', '2', '--dry-run', '--json')).stdout) as {
      keptForkPoints: string[];
    };
    expect(json.keptForkPoints).toEqual([fixture.main[2]!.id]);
    expect((await fixture.provider.list(fixture.provider.resolveLocation(fixture.location))).length).toBe(7);
    const older = await crewline('prune', '--older-than', '1w', '--dry-run');
    expect(older.stdout).toContain('Nothing to prune');
    // Both options: only what both select (beyond the newest 2 AND older than a week) goes.
    const both = await crewline('prune', '--keep', '2', '--older-than', '1w');
    expect(both.code).toBe(0);
    expect(both.stdout).toContain('Nothing to prune');
    expect((await fixture.provider.list(fixture.provider.resolveLocation(fixture.location))).length).toBe(7);
  });

  it('every --json output starts with its schemaVersion', async () => {
    const outputs = [
      await crewline('list', '--json'),
      await crewline('info', '--json'),
      await crewline('diff', fixture.main[0]!.id, fixture.main[1]!.id, '--json'),
      await crewline('prune', '--keep', '100', '--dry-run', '--json'),
      await crewline('flows', '--json'),
    ];
    for (const output of outputs) {
      expect(output.code, output.stderr).toBe(0);
      const parsed = JSON.parse(output.stdout) as Record<string, unknown>;
      expect(Object.keys(parsed)[0]).toBe('schemaVersion');
      expect(parsed.schemaVersion).toBe(1);
    }
  });

  it('prune --run prunes one run, named by a prefix of its id', async () => {
    const fork = await crewline(
      'prune',
      '--keep',
      '1',
      '--run',
      fixture.fork.lineageId.slice(0, 5),
      '--dry-run',
    );
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain('Nothing to prune');
    const missing = await crewline('prune', '--keep', '1', '--run', 'zzzz');
    expect(missing.code).toBe(2);
    // The hint names the location: `checkpoint list` alone would look in the default one.
    expect(missing.stderr).toContain(
      `no run "zzzz" in ./${fixture.relative} (see the RUN column of \`crewline checkpoint list ./${fixture.relative}\`)`,
    );
  });

  // The trial: `prune --branch nosuch` said "Nothing to prune", exit 0, while `prune --run zzzz` exited 2.
  it('prune --branch refuses a branch that has no checkpoint here, as --run refuses a run (exit code 2)', async () => {
    const missing = await crewline('prune', '--keep', '1', '--branch', 'nosuch');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `no branch "nosuch" in ./${fixture.relative} (branches: experiment, main); nothing was removed`,
    );
    expect((await fixture.provider.list(fixture.provider.resolveLocation(fixture.location))).length).toBe(7);
    const existing = await crewline('prune', '--keep', '1', '--branch', 'experiment', '--dry-run');
    expect(existing.code, existing.stderr).toBe(0);
  });
});

/** C0 controls other than line feed and tab, DEL and C1 controls, as their codes. */
function controlCharacters(text: string): number[] {
  return Array.from(text)
    .map((character) => character.charCodeAt(0))
    .filter((code) => (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f));
}

describe('stored strings reach the terminal without control characters', () => {
  it('list, info, diff and --json escape C0 and C1 controls of a tampered checkpoint file', async () => {
    const project = await temporaryDirectory();
    try {
      const fixture = await writeFixture('json', project.path);
      const target = fixture.main[3]!;
      // A tampered file: an escape sequence in the trigger and in a task output, a C1 CSI in the output too.
      const file = target.reference;
      const text = await readFile(file, 'utf8');
      await writeFile(
        file,
        text
          .replace('"trigger":"task_completed"', '"trigger":"task_\\u001b]0;owned\\u0007started"')
          .replace('Output 1: findings about AI.', 'Output 1: \\u001b[2J\\u009b31m cleared'),
      );
      const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });
      const outputs = [
        await crewline('list'),
        await crewline('info', target.id),
        await crewline('info', target.id, '--full'),
        await crewline('diff', fixture.main[0]!.id, target.id),
        await crewline('list', '--json'),
        await crewline('info', target.id, '--json'),
      ];
      for (const output of outputs) {
        expect(output.code, output.stderr).toBe(0);
        expect(controlCharacters(output.stdout)).toEqual([]);
      }
      expect(outputs[0]!.stdout).toContain('task_\\x1b]0;owned\\x07started');
      expect(outputs[1]!.stdout).toContain('Output 1: \\x1b[2J\\x9b31m cleared');
      // JSON keeps the value (escaped the JSON way), so a script reads what was stored.
      const parsed = JSON.parse(outputs[5]!.stdout) as { metadata: { trigger: string } };
      expect(parsed.metadata.trigger).toBe('task_\u001b]0;owned\u0007started');
    } finally {
      await project.remove();
    }
  });
});

describe('errors are one line and a non-zero exit code', () => {
  let project: { path: string; remove: () => Promise<void> };
  let fixture: Fixture;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    fixture = await writeFixture('json', project.path);
  });
  afterAll(() => project.remove());

  const oneLine = (text: string) => {
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).toMatch(/^crewline: /);
    expect(text).not.toMatch(/\n\s+at /);
  };

  it('a missing default location says what was looked for', async () => {
    const empty = await temporaryDirectory();
    const result = await runCommand(['list'], { cwd: empty.path });
    await empty.remove();
    expect(result.code).toBe(3);
    oneLine(result.stderr);
    expect(result.stderr).toContain('neither ./.checkpoints nor ./.checkpoints.db exists');
  });

  it('a reference that is neither a path nor an id in a location names the argument', async () => {
    const empty = await temporaryDirectory();
    const result = await runCommand(['info', 'nosuchdir'], { cwd: empty.path });
    await empty.remove();
    expect(result.code).toBe(3);
    oneLine(result.stderr);
    expect(result.stderr).toContain('"nosuchdir" is not a file or directory');
    expect(result.stderr).toContain('--location');
  });

  it('listing an empty (0-byte) .db file leaves it empty: reads never create a database', async () => {
    const empty = join(project.path, 'empty.db');
    await writeFile(empty, '');
    const result = await crewline('list', 'empty.db');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(statSync(empty).size).toBe(0);
  });

  it('a missing location argument', async () => {
    const result = await crewline('list', 'nowhere/at-all');
    expect(result.code).toBe(3);
    oneLine(result.stderr);
    expect(result.stderr).toContain('location nowhere/at-all does not exist');
  });

  it('an unknown id', async () => {
    const result = await crewline('info', 'zzzz');
    expect(result.code).toBe(3);
    oneLine(result.stderr);
    expect(result.stderr).toContain('no checkpoint "zzzz"');
  });

  it('an ambiguous id prefix', async () => {
    const result = await crewline('info', fixture.main[0]!.id.slice(0, 4));
    expect(result.code).toBe(3);
    oneLine(result.stderr);
    expect(result.stderr).toMatch(/matches \d+ checkpoints/);
  });

  it('a corrupt checkpoint file', async () => {
    const path = fixture.main[0]!.reference;
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(path, 'utf8');
    const broken = join(project.path, '.checkpoints', 'main', path.split('/').at(-1)!);
    await writeFile(broken, text.slice(0, Math.floor(text.length / 2)));
    const result = await crewline('info', broken);
    await writeFile(broken, text);
    expect(result.code).toBe(4);
    oneLine(result.stderr);
    expect(result.stderr).toMatch(/truncated|not valid JSON|invalid/);
  });

  it('a damaged checkpoint asked for by id is unreadable (exit code 4) with its cause, not "no checkpoint"', async () => {
    const target = fixture.main[1]!;
    const child = fixture.main[2]!;
    const text = await readFile(target.reference, 'utf8');
    const damages: [string, RegExp][] = [
      // Cut inside its metadata: the listing cannot describe it and leaves it out.
      [text.slice(0, 100), /is not valid JSON \(it looks truncated\)/],
      [text.replace(/"formatVersion":\s*1/, '"formatVersion": 99'), /format version 99 is newer/],
    ];
    try {
      for (const [damaged, cause] of damages) {
        await writeFile(target.reference, damaged);
        // The short id list prints in the PARENT column, and a unique prefix, name it as the id does.
        const short = target.id.slice(-8);
        for (const args of [
          ['info', target.id],
          ['resume', target.id],
          ['fork', target.id],
          ['diff', target.id, child.id],
          ['info', short],
          ['info', target.id.slice(0, -1)],
          ['resume', short],
          ['fork', short],
          ['diff', short, child.id],
        ]) {
          const result = await crewline('checkpoint', ...args);
          expect(result.code, args.join(' ')).toBe(4);
          const lines = result.stderr.trimEnd().split('\n');
          // Warnings of the listing come first; the last line is the error.
          expect(lines.at(-1)).toMatch(
            new RegExp(`^crewline: checkpoint ${target.id} in \\./\\.checkpoints is unreadable: `),
          );
          expect(lines.at(-1)).toMatch(cause);
        }
        const listed = await crewline('checkpoint', 'list');
        expect(listed.code).toBe(0);
        const row = listed.stdout.split('\n').find((line) => line.startsWith(child.id))!;
        expect(row).toContain(`${short} (unreadable)`);
        expect(row).not.toContain('(pruned)');
        const info = await crewline('checkpoint', 'info', child.id);
        expect(info.stdout).toContain(`Parent:    ${target.id} (unreadable)`);
      }
    } finally {
      await writeFile(target.reference, text);
    }
  });

  it('bad usage', async () => {
    const unknownOption = await crewline('list', '--frobnicate');
    expect(unknownOption.code).toBe(2);
    oneLine(unknownOption.stderr);
    expect(unknownOption.stderr).toContain('crewline checkpoint list --help');
    const prune = await crewline('prune');
    expect(prune.code).toBe(2);
    expect(prune.stderr).toContain('--keep N and/or --older-than D');
    const keepNone = await crewline('prune', '--keep', '0');
    expect(keepNone.code).toBe(2);
    oneLine(keepNone.stderr);
    expect(keepNone.stderr).toContain('--keep must be 1 or more');
    const duration = await crewline('prune', '--older-than', 'soon');
    expect(duration.code).toBe(2);
    expect(duration.stderr).toContain('use a number and a unit s, m, h, d or w');
    const diff = await crewline('diff', 'one');
    expect(diff.code).toBe(2);
    const command = await crewline('frobnicate');
    expect(command.code).toBe(2);
    oneLine(command.stderr);
  });

  it('a Postgres server that cannot be reached is one line, without the password, exit code 7 (not 4: no checkpoint is damaged)', async () => {
    const result = await crewline('list', 'postgres://user:secret@127.0.0.1:1/db');
    expect(result.code).toBe(7);
    oneLine(result.stderr);
    expect(result.stderr).toContain('cannot reach the Postgres server of postgres://user@127.0.0.1:1/db');
    expect(result.stderr).not.toContain('secret');
  });

  it('the browser refuses to start without a terminal', async () => {
    const result = await crewline('checkpoint');
    expect(result.code).toBe(2);
    oneLine(result.stderr);
    expect(result.stderr).toContain('needs an interactive terminal');
  });

  it('the installed binary (bin/crewline.js) runs', async () => {
    const { spawnSync } = await import('node:child_process');
    const bin = new URL('../../bin/crewline.js', import.meta.url).pathname;
    const result = spawnSync(process.execPath, [bin, 'list', '--json'], {
      cwd: project.path,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect((JSON.parse(result.stdout) as { count: number }).count).toBe(7);
  });
});
