import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../core/cli-context.js';
import { endsWhenOutputCloses, runCli } from '../main.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { CapturedOutput, temporaryDirectory } from '../test-support/run-command.js';

/** `crewline <args>` as from a terminal (the browser refuses anything else before it reads its location). */
async function runInTerminal(args: readonly string[], cwd: string) {
  const stdout = new CapturedOutput();
  stdout.isTTY = true;
  const stderr = new CapturedOutput();
  const context: CliContext = {
    cwd,
    env: {},
    stdout,
    stderr,
    stdin: { isTTY: true } as NodeJS.ReadStream,
  };
  const code = await runCli(args, context);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

// Trial 3: `crewline checkpoint pipe.db` said `unknown checkpoint command "pipe.db"`, where list,
// serve and flows take the location as a positional argument.
describe('crewline checkpoint LOCATION (the browser)', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  beforeAll(async () => {
    directory = await temporaryDirectory();
    // A file that exists but holds no checkpoints: refused before the browser draws anything.
    await writeFile(join(directory.path, 'saved'), 'not a checkpoint');
  });
  afterAll(async () => {
    await directory?.remove();
  });

  it('takes a positional location as --location', async () => {
    const positional = await runInTerminal(['checkpoint', 'nosuch.db'], directory.path);
    const option = await runInTerminal(['checkpoint', '--location', 'nosuch.db'], directory.path);
    expect(positional.stderr).not.toContain('unknown checkpoint command');
    expect(positional.stderr).toContain('nosuch.db');
    expect(positional).toEqual(option);
    expect(option.code).not.toBe(0);
  });

  it('takes a path without a dot or slash when it exists, and still names a typo of a command', async () => {
    const existing = await runInTerminal(['checkpoint', 'saved', '--lineage', 'x'], directory.path);
    expect(existing.stderr).not.toContain('unknown checkpoint command');
    expect(existing).toEqual(await runInTerminal(['checkpoint', '--location', 'saved'], directory.path));
    expect(existing.stderr).toContain('saved');
    const typo = await runInTerminal(['checkpoint', 'lst'], directory.path);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown checkpoint command "lst" (did you mean list?)');
  });

  it('refuses two locations', async () => {
    const result = await runInTerminal(['checkpoint', 'a.db', 'b.db'], directory.path);
    expect(result.code).toBe(2);
  });

  it('is the browser, which goes on without its output', () => {
    expect(endsWhenOutputCloses(['checkpoint', 'pipe.db'])).toBe(false);
    expect(endsWhenOutputCloses(['checkpoint', 'postgres://host/db'])).toBe(false);
  });
});

// Trial (flows) 12: `crewline checkpoint --lineage zzz` opened an empty browser ("no checkpoints
// here yet"), where `list --run zzz` refuses a run that is not there.
describe('crewline checkpoint --lineage (the browser of one run)', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: CrewRun;
  beforeAll(async () => {
    directory = await temporaryDirectory();
    run = await writeCrewRun('json', directory.path);
  });
  afterAll(async () => {
    await run?.close();
    await directory?.remove();
  });

  it('refuses a lineage the location does not hold before the browser opens, as list --run does', async () => {
    const result = await runInTerminal(['checkpoint', '--lineage', 'zzz'], directory.path);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'crewline: no run "zzz" in ./.checkpoints (see the RUN column of `crewline checkpoint list ./.checkpoints`)\n',
    );
    expect(result.code).toBe(2);
    const listed = await runInTerminal(['checkpoint', 'list', '--run', 'zzz'], directory.path);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toBe(result.stderr);
  });
});
