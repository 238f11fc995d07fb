import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// Deploy trial: `crewline checkpoint resume "" --location …` (a script's empty variable) continued and
// wrote into the location's newest run, whichever it was.
let project: Awaited<ReturnType<typeof temporaryDirectory>>;
let fixture: Fixture;
beforeAll(async () => {
  project = await temporaryDirectory('crewline-empty-reference-');
  fixture = await writeFixture('json', project.path);
});
afterAll(async () => {
  await fixture?.provider.close?.();
  await project?.remove();
});

it.each(['resume', 'fork'])(
  'checkpoint %s "" is refused before anything runs (exit code 2)',
  async (mode) => {
    const before = await fixture.provider.list(fixture.location);
    const result = await runCommand(['checkpoint', mode, '', '--location', fixture.location], {
      cwd: project.path,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the checkpoint reference is empty');
    expect(await fixture.provider.list(fixture.location)).toHaveLength(before.length);
  },
);

// Review of ba3c7f1: `--location ""` was taken as no location and resumed the default location's newest run.
it.each(['resume', 'fork', 'list'])(
  'checkpoint %s --location "" is refused (exit code 2)',
  async (command) => {
    const before = await fixture.provider.list(fixture.location);
    const result = await runCommand(['checkpoint', command, '--location', ''], { cwd: project.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--location is empty');
    expect(await fixture.provider.list(fixture.location)).toHaveLength(before.length);
  },
);
