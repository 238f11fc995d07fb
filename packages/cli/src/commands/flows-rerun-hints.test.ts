import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, persist, registerProject, start } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// Trial 1127 B: what `flows rerun` and `flows` say, in a location given with --location.
describe('flows and flows rerun hints', () => {
  let project: { path: string; remove: () => Promise<void> };
  let plain: StoredCheckpoint[];
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-rerun-hints-');
    // Installed in the project, so that a run through npx is named `npx crewline` (commandName).
    await mkdir(join(project.path, 'node_modules', '.bin'), { recursive: true });
    await writeFile(join(project.path, 'node_modules', '.bin', 'crewline'), '');
    const location = join(project.path, 'my saves');
    const provider = await providerOf('json');

    /** Checkpointed without @persist: its saves are plain checkpoints. */
    class PlainFlow extends Flow<{ items: number }> {
      initialState = { items: 0 };
      @start() count() {
        this.state.items += 1;
        return this.state.items;
      }
      @listen('count') double(items: number) {
        return items * 2;
      }
    }

    @persist({ location, provider })
    class ReviewFlow extends Flow<{ verdict: string }> {
      initialState = { verdict: '' };
      @start() write() {
        return 'an essay';
      }
      @listen('write') edit(essay: string) {
        return essay;
      }
      @listen('edit') async approve(essay: string) {
        this.state.verdict = await this.ask(`Publish "${essay}"?`);
        return this.state.verdict;
      }
    }
    registerProject({ flows: { PlainFlow, ReviewFlow } });
    await new PlainFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    plain = await provider.list(provider.resolveLocation(location));
    await new ReviewFlow({ bus: new EventBus() }).kickoff({ inputs: { id: 'review-1' } });
  });
  afterAll(() => project?.remove());

  it('flows: the hints name the --location given, shell-quoted', async () => {
    const result = await crewline('checkpoint', 'flows', '--location', 'my saves');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "crewline checkpoint flows rerun <state id> --from <method> --location 'my saves'",
    );
    expect(result.stdout).toContain(
      "crewline checkpoint list --location 'my saves' shows its checkpoints; continue one with crewline checkpoint resume <checkpoint id> --location 'my saves'.",
    );
  });

  it('flows rerun of a run checkpointed without @persist says so and names resume and fork', async () => {
    const last = plain.at(-1)!;
    const short = last.id.slice(last.id.lastIndexOf('-') + 1);
    for (const id of [short, last.entities.find((entity) => entity.kind === 'flow')!.id.slice(0, 8)]) {
      const result = await crewline(
        'checkpoint',
        'flows',
        'rerun',
        id,
        '--from',
        'count',
        '--location',
        'my saves',
      );
      expect(result.code).not.toBe(0);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(
        `flow PlainFlow of "${id}" is not @persist: its saves in ./my saves are plain checkpoints`,
      );
      expect(result.stderr).toContain(`crewline checkpoint resume ${short} --location 'my saves'`);
      expect(result.stderr).toContain("crewline checkpoint fork <checkpoint id> --location 'my saves'");
      expect(result.stderr).not.toContain('no saves of');
    }
    const unknown = await crewline(
      'checkpoint',
      'flows',
      'rerun',
      'nothing-1',
      '--from',
      'count',
      '--location',
      'my saves',
    );
    expect(unknown.stderr).toContain(
      `no saves of flow state "nothing-1" in ./my saves; list the saved states with crewline checkpoint flows --location 'my saves'`,
    );
  });

  it('flows rerun without --from names a method of the state, or none', async () => {
    const known = await crewline('checkpoint', 'flows', 'rerun', 'review-1', '--location', 'my saves');
    expect(known.code).toBe(2);
    expect(known.stderr).toContain(
      '--from <method>, e.g. --from edit (flow state "review-1" can re-run from edit)',
    );
    expect(known.stderr).not.toContain('draft');
    const unknown = await crewline('checkpoint', 'flows', 'rerun', 'nothing-1', '--location', 'my saves');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--from <method>');
    expect(unknown.stderr).not.toContain('e.g.');
    const noState = await crewline('checkpoint', 'flows', 'rerun', '--location', 'my saves');
    expect(noState.stderr).toContain("`crewline checkpoint flows --location 'my saves'` lists them");
  });

  it('flows rerun that ends paused prints the command that answers, as resume does', async () => {
    const result = await crewline(
      'checkpoint',
      'flows',
      'rerun',
      'review-1',
      '--from',
      'edit',
      '--location',
      'my saves',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Paused: flow ReviewFlow waits for an answer in approve:');
    expect(result.stdout).toContain('  Publish "an essay"?');
    expect(result.stdout).toMatch(
      /Answer with: crewline checkpoint resume '\.\/my saves\/\S+\.json' --answer "\.\.\."/,
    );
  });

  // Trial s9: `npx crewline checkpoint flows .flowcp` said `crewline checkpoint list …` and
  // `crewline checkpoint resume …`, and a checkpoint id not found said run `crewline checkpoint
  // list …`: not on the PATH where npx ran the CLI (README: commands name the CLI as it was run).
  it('every hint names the CLI as it was run (npx crewline)', async () => {
    const npx = { npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64', npm_command: 'exec' };
    const viaNpx = (...args: string[]) => runCommand(args, { cwd: project.path, env: npx });
    const said: string[] = [];
    const flows = await viaNpx('checkpoint', 'flows', '--location', 'my saves');
    expect(flows.stdout).toContain(
      "npx crewline checkpoint list --location 'my saves' shows its checkpoints; continue one with npx crewline checkpoint resume <checkpoint id> --location 'my saves'.",
    );
    expect(flows.stdout).toContain(
      "npx crewline checkpoint flows rerun <state id> --from <method> --location 'my saves'",
    );
    said.push(flows.stdout);
    const last = plain.at(-1)!;
    const short = last.id.slice(last.id.lastIndexOf('-') + 1);
    for (const args of [
      ['rerun', short, '--from', 'count'],
      ['rerun', 'nothing-1', '--from', 'count'],
      ['rerun'],
    ]) {
      const rerun = await viaNpx('checkpoint', 'flows', ...args, '--location', 'my saves');
      expect(rerun.code).not.toBe(0);
      said.push(rerun.stderr);
    }
    const missing = await viaNpx('checkpoint', 'info', 'nothing-1', '--location', 'my saves');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("run `npx crewline checkpoint list '");
    said.push(missing.stderr);
    const diff = await viaNpx('checkpoint', 'diff', short);
    expect(diff.stderr).toContain('npx crewline checkpoint diff A B');
    said.push(diff.stderr);
    const noRun = await viaNpx('checkpoint', 'list', '--location', 'my saves', '--run', 'nobody');
    expect(noRun.stderr).toContain("`npx crewline checkpoint list './my saves'`");
    said.push(noRun.stderr);
    const browser = await viaNpx('checkpoint', '--location', 'my saves');
    expect(browser.stderr).toContain('use `npx crewline checkpoint list` and `npx crewline checkpoint info`');
    said.push(browser.stderr);
    const unknownOption = await viaNpx('checkpoint', 'flows', '--locaton', 'my saves');
    expect(unknownOption.stderr).toContain('run `npx crewline checkpoint flows --help`');
    said.push(unknownOption.stderr);
    const unknownCommand = await viaNpx('checkpoint', 'flow');
    expect(unknownCommand.stderr).toContain('`npx crewline checkpoint --help`');
    said.push(unknownCommand.stderr);
    // No command the user is told to run is named `crewline` alone.
    for (const text of said) expect(text).not.toMatch(/(?<!npx )crewline checkpoint/);
  });
});
