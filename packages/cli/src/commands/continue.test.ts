import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureKind, providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

describe.each<FixtureKind>(['json', 'sqlite'])('resume and fork a real crew checkpoint (%s)', (kind) => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun(kind, project.path);
  });
  afterAll(async () => {
    await run.close();
    await project.remove();
  });

  it('wrote one checkpoint per task', () => {
    expect(run.checkpoints.map((checkpoint) => checkpoint.trigger)).toEqual([
      'task_completed',
      'task_completed',
      'task_completed',
    ]);
  });

  it('resume of a checkpoint its run went past continues on a new branch, with progress lines', async () => {
    const first = run.checkpoints[0]!;
    const logs = captureLogs();
    const result = await crewline('checkpoint', 'resume', first.id).finally(() =>
      logs.stop({ allowUnexpected: true }),
    );
    // The run already continued past the first checkpoint: continuing it on main would grow a second
    // head there, so the continuation gets a branch of its own, and a warning says so.
    expect(logs.expect(`checkpoint ${first.id} is not the latest of its run`)).toHaveLength(1);
    expect(logs.unexpected()).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Resuming ${first.id} (branch main, crew Research crew 1/3 tasks)`);
    expect(result.stdout).toMatch(/task 2 outline started/);
    expect(result.stdout).toMatch(/task 3 write completed/);
    expect(result.stdout).not.toMatch(/task 1 research started/);
    expect(result.stdout).toMatch(/Finished crew Research crew on branch fork\/\S+; last checkpoint /);
    expect(result.stdout).toContain('[offline model]');
    const main = JSON.parse((await crewline('list', '--branch', 'main', '--json')).stdout) as {
      checkpoints: { id: string }[];
    };
    expect(main.checkpoints.map((checkpoint) => checkpoint.id)).toEqual(
      run.checkpoints.map((checkpoint) => checkpoint.id),
    );
  });

  it('resume and fork --json print one JSON document: no progress lines, the outcome, a schemaVersion', async () => {
    const last = run.checkpoints.at(-1)!;
    const forked = await crewline('fork', run.checkpoints[1]!.id, '--json');
    expect(forked.stderr).toBe('');
    expect(forked.code).toBe(0);
    const fork = JSON.parse(forked.stdout) as Record<string, unknown>;
    expect(fork).toMatchObject({
      schemaVersion: 1,
      mode: 'fork',
      from: run.checkpoints[1]!.id,
      kind: 'crew',
      name: 'Research crew',
      branch: expect.stringMatching(/^fork\//),
      lastCheckpoint: expect.any(String),
      output: expect.stringContaining('[offline model]'),
    });
    expect(Object.keys(fork)[0]).toBe('schemaVersion');
    const resumed = JSON.parse((await crewline('resume', last.id, '--json')).stdout) as Record<
      string,
      unknown
    >;
    expect(resumed).toMatchObject({ schemaVersion: 1, mode: 'resume', from: last.id });
  });

  it('fork with an edited output and input writes a new branch whose later tasks saw the edit', async () => {
    const first = run.checkpoints[0]!;
    const result = await crewline(
      'fork',
      first.id,
      '--branch',
      'what-if',
      '--set-output',
      '1=EDITED RESEARCH NOTES',
      '--input',
      'topic=coral reefs',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('replaced outputs: task 1');
    expect(result.stdout).toContain('changed inputs: topic');
    expect(result.stdout).toMatch(/Finished crew Research crew on branch what-if/);
    const list = JSON.parse((await crewline('list', '--branch', 'what-if', '--json')).stdout) as {
      checkpoints: { id: string; parentId: string | null }[];
    };
    expect(list.checkpoints.length).toBeGreaterThanOrEqual(2);
    expect(list.checkpoints[0]!.parentId).toBe(first.id);
    const info = JSON.parse((await crewline('info', list.checkpoints.at(-1)!.id, '--json')).stdout) as {
      inputs: Record<string, unknown>;
      tasks: { status: string; output?: string }[];
    };
    expect(info.inputs.topic).toBe('coral reefs');
    expect(info.tasks.map((task) => task.status)).toEqual(['completed', 'completed', 'completed']);
    expect(info.tasks[0]!.output).toBe('EDITED RESEARCH NOTES');
    // The main branch is untouched by the fork.
    const main = JSON.parse((await crewline('list', '--branch', 'main', '--json')).stdout) as {
      checkpoints: unknown[];
    };
    expect(main.checkpoints.length).toBeGreaterThanOrEqual(3);
  });

  // The trial: `fork … --input topic=tides`, the saved value, printed "changed inputs: topic".
  it('an --input equal to the saved value is not announced as a change', async () => {
    const first = run.checkpoints[0]!;
    const heading = await crewline('fork', first.id, '--input', 'topic=tide pools');
    expect(heading.code).toBe(0);
    expect(heading.stdout).not.toContain('changed inputs');
    expect(heading.stdout).toContain('  inputs as saved: topic\n');
  });

  it('fork onto a branch that already has checkpoints is refused before the heading: one line, exit code 2, nothing written', async () => {
    const countAll = async () =>
      (JSON.parse((await crewline('list', '--json')).stdout) as { count: number }).count;
    const before = await countAll();
    const result = await crewline('checkpoint', 'fork', run.checkpoints[0]!.id, '--branch', 'main');
    // The trial: "Forking … onto branch what-if" was printed, then the runtime refused (exit code 1).
    expect(result.stdout).toBe('');
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(
      /^crewline: branch "main" already exists in \S+; choose another name with --branch or omit it to generate one\n$/,
    );
    expect(await countAll()).toBe(before);
  });

  it('refuses to replace the output of a task that has not completed', async () => {
    const first = run.checkpoints[0]!;
    const result = await crewline('fork', first.id, '--set-output', '3=nope');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('task 3 is pending; only completed task outputs can be replaced');
    const outOfRange = await crewline('resume', first.id, '--set-output', '9=nope');
    expect(outOfRange.stderr).toContain('numbered 1 to 3');
  });

  it('refuses an input the run does not know before any model call: one line, exit code 2, nothing written', async () => {
    const countAll = async () =>
      (JSON.parse((await crewline('list', '--json')).stdout) as { count: number }).count;
    const before = await countAll();
    for (const mode of ['fork', 'resume']) {
      const result = await crewline('checkpoint', mode, run.checkpoints[0]!.id, '--input', 'topc=x');
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^crewline: checkpoint \S+: input "topc" is not one the run knows \(known: topic\); check its spelling/,
      );
      // The input meant, as `runs enqueue` names it: the user sees the flag to type.
      expect(result.stderr).toContain('did you mean --input topic=…?');
      // Refused before anything is announced: no "Forking ... changed inputs" heading above the refusal.
      expect(result.stdout).toBe('');
    }
    expect(await countAll()).toBe(before);
  });

  it('refuses a branch name it cannot use before saying anything of the fork: exit code 2, nothing written', async () => {
    const result = await crewline('fork', run.checkpoints[0]!.id, '--branch', 'bad name');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^crewline: --branch "bad name" is not allowed; use segments of letters/);
    // Refused before the heading: no "Forking ... onto branch bad name" above the refusal.
    expect(result.stdout).toBe('');
  });

  it('refuses a fork of a completed run that nothing would make run again, instead of naming a branch it never creates', async () => {
    const last = run.checkpoints.at(-1)!;
    const attempts = [
      ['fork', last.id, '--branch', 'done-fork'],
      ['fork', last.id, '--branch', 'done-fork', '--input', 'topic=reefs'],
      // Only the last task is replaced: no task comes after it to run again.
      ['fork', last.id, '--branch', 'done-fork', '--set-output', '3=x'],
      ['resume', last.id, '--input', 'topic=reefs'],
    ];
    for (const args of attempts) {
      const result = await crewline('checkpoint', ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(
        /^crewline: checkpoint \S+: nothing to run: every task of crew "Research crew" is completed and no edit makes one run again .*--set-output N=text/,
      );
      expect(result.stdout, args.join(' ')).toBe('');
    }
    // No branch was created: list refuses a branch with no checkpoint in the location (exit 2).
    const forked = await crewline('list', '--branch', 'done-fork', '--json');
    expect(forked.code).toBe(2);
    expect(forked.stderr).toContain('no branch "done-fork" in');
  });
});

class ApprovalFlow extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    this.state.verdict = await this.ask(`Publish "${draft}"?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    return verdict === 'yes' ? 'PUBLISHED' : 'DISCARDED';
  }
}

describe('a paused flow from the command line', () => {
  let project: { path: string; remove: () => Promise<void> };
  let paused: string;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    registerProject({ flows: { ApprovalFlow } });
    const result = await new ApprovalFlow({
      bus: new EventBus(),
      checkpoint: { location: join(project.path, '.checkpoints') },
    }).kickoff();
    if (result.status !== 'paused' || !result.pause.resumeFrom) throw new Error('expected a pause');
    paused = result.pause.resumeFrom;
  });
  afterAll(() => project.remove());

  it('without --answer asks again and prints the question and the command that answers it', async () => {
    const result = await crewline('checkpoint', 'resume', paused);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Paused: flow ApprovalFlow waits for an answer in approve:');
    expect(result.stdout).toContain('  Publish "a short essay"?');
    expect(result.stdout).toMatch(
      /Answer with: crewline checkpoint resume \.\/\.checkpoints\/main\/\S+\.json --answer "\.\.\."/,
    );
    expect(result.stdout).not.toContain('Finished');
  });

  it('resume --answer continues the flow with the answer; fork --answer on a new branch', async () => {
    // Asking again (above) continued the run: its latest checkpoint is the one that waits now.
    const listed = JSON.parse((await crewline('checkpoint', 'list', '--json')).stdout) as {
      checkpoints: { reference: string }[];
    };
    const waiting = listed.checkpoints.at(-1)!.reference;
    const resumed = await crewline('checkpoint', 'resume', waiting, '--answer', 'yes');
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('  answer: yes');
    expect(resumed.stdout).toMatch(/Finished flow ApprovalFlow on branch main/);
    expect(resumed.stdout).toMatch(/Output:\nPUBLISHED\n/);

    const forked = await crewline('checkpoint', 'fork', paused, '--branch', 'said-no', '--answer', 'no');
    expect(forked.code).toBe(0);
    expect(forked.stdout).toMatch(/Finished flow ApprovalFlow on branch said-no/);
    expect(forked.stdout).toMatch(/Output:\nDISCARDED\n/);
  });

  it('refuses --answer for a flow that does not wait for one, before anything runs (usage, exit 2)', async () => {
    // Saved as draft finished: the flow runs on, it does not wait for an answer there.
    const location = join(project.path, 'not-paused');
    const provider = await providerOf('json');
    await new ApprovalFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const finished = (await provider.list(provider.resolveLocation(location)))[0]!;
    await provider.close?.();
    const result = await crewline('checkpoint', 'fork', finished.reference, '--answer', 'yes');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/flow ApprovalFlow does not wait for an answer.*drop --answer/);
  });

  it('refuses --answer for a checkpoint that holds no flow', async () => {
    const location = join(project.path, 'crew');
    const crewRun = await writeCrewRun('json', location);
    try {
      const result = await crewline(
        'checkpoint',
        'resume',
        crewRun.checkpoints[0]!.reference,
        '--answer',
        'yes',
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/only continues a paused flow/);
    } finally {
      await crewRun.close();
    }
  });
});
