import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { readDocument } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewDocument } from '../core/document-view.js';
import { providerOf } from '../test-support/fixtures.js';
import { useBrowserProject, useTmuxSessions } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// The whole browser, for real: the crewline binary in a tmux pseudo-terminal of 80×24, keys typed
// one at a time, the screen read back. CI installs tmux (.ci/run); locally: apt-get install -y tmux.
if (!hasTmux) {
  console.warn(
    'SKIPPED: the real-terminal TUI tests need tmux, which is not installed (apt-get install -y tmux)',
  );
}

describe.skipIf(!hasTmux)('the checkpoint browser in a real terminal (tmux)', () => {
  const project = useBrowserProject('json');

  it('opens, selects a checkpoint, edits a task output, forks, and shows the run finish', async () => {
    const { run } = project;
    const first = run.checkpoints[0]!;
    const browser = project.open();

    let text = await browser.waitForScreen(
      (current) => current.includes('crew Research crew (3)') && current.includes('[Overview]'),
      'the tree',
    );
    expect(text).toContain('crewline checkpoints');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(24);

    // The newest checkpoint (3/3) is selected; move up to the first one (1/3). Both `k`s in one
    // write, as a held key or a slow SSH link delivers them: each one moves.
    await browser.send('kk');
    text = await browser.waitForScreen(
      (current) => current.includes(`Id       ${first.id}`),
      'the first checkpoint',
    );
    expect(text.split('\n').find((line) => line.startsWith('>'))).toContain('1/3');

    // Tasks tab, edit the output of task 1.
    await browser.send('Tab', '2');
    await browser.waitForScreen(
      (current) => current.includes('[Tasks]') && current.includes('[x] 1. research'),
      'the tasks tab',
    );
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await browser.send('C-u');
    await browser.type('TMUX EDIT');
    await browser.send('Enter');
    text = await browser.waitForScreen((current) => current.includes('*edited'), 'the edit to be kept');
    expect(text).toContain('TMUX EDIT');

    // Fork onto a named branch; the continuation runs for real.
    await browser.send('f');
    await browser.waitForScreen((current) => current.includes('Fork: new branch name'), 'the branch prompt');
    await browser.type('tmux');
    await browser.send('Enter');
    text = await browser.waitForScreen(
      (current) => current.includes('Run finished on branch tmux'),
      'the run to finish',
      60_000,
    );
    expect(text).toMatch(/task 2 outline started/);
    expect(text).toMatch(/task 3 write completed/);

    // Back to the tree: the new branch is there, nested under the checkpoint it came from.
    await browser.send('Space');
    await browser.waitForScreen((current) => current.includes('tmux (2)'), 'the new branch in the tree');

    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');

    // What the fork wrote: a branch whose parent is the selected checkpoint, the edited output kept,
    // the later tasks re-run.
    const provider = await providerOf('json');
    const location = provider.resolveLocation(run.location);
    const fork = await provider.list(location, { branch: 'tmux' });
    expect(fork[0]!.parentId).toBe(first.id);
    const view = viewDocument(await readDocument(provider, location, fork.at(-1)!.id));
    expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'completed', 'completed']);
    expect(view.tasks[0]!.output).toBe('TMUX EDIT');
  }, 120_000);
});

// A project whose crewline.config.ts registers a slow model, under this package's node_modules so
// that the config resolves @crewline/runtime like a user's project does.
const slowConfig = `import { defineConfig } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

export default defineConfig({ models: { 'slow:writer': () => offlineModel({ name: 'slow', latencyMs: 1500 }) } });
`;

describe.skipIf(!hasTmux)('Ctrl+C during a run started in the browser', () => {
  const project = join(
    new URL('../../node_modules/.crewline-test/', import.meta.url).pathname,
    `interrupt-${process.pid}`,
  );
  const location = join(project, '.checkpoints');
  const plainLocation = join(project, 'plain');
  const openSession = useTmuxSessions();

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), slowConfig);
    registerProject({ models: { 'slow:writer': () => offlineModel({ name: 'slow' }) } });
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: 'slow:writer' });
    const crew = new Crew({
      name: 'Slow crew',
      agents: [writer],
      tasks: [1, 2, 3, 4].map(
        (step) => new Task({ description: `Step ${step}`, expectedOutput: 'A line', agent: writer }),
      ),
      checkpoint: { location, provider: await providerOf('json'), onEvents: ['task_completed', 'SIGINT'] },
    });
    await crew.kickoff({});
    // The same crew without a checkpoint on SIGINT: Ctrl+C before its next task ends writes nothing.
    const plain = new Crew({
      name: 'Plain crew',
      agents: [writer],
      tasks: [1, 2, 3, 4].map(
        (step) => new Task({ description: `Step ${step}`, expectedOutput: 'A line', agent: writer }),
      ),
      checkpoint: {
        location: plainLocation,
        provider: await providerOf('json'),
        onEvents: ['task_completed'],
      },
    });
    await plain.kickoff({});
  });

  afterAll(() => rm(project, { recursive: true, force: true }));

  it('writes the SIGINT checkpoint and ends the process with 130', async () => {
    const stderrFile = join(project, 'stderr.txt');
    const browser = openSession(['checkpoint'], { cwd: project, env: { NO_COLOR: '1' }, stderrFile });
    await browser.waitForScreen((current) => current.includes('crew Slow crew (4)'), 'the tree');
    // The first checkpoint (1/4 done): forking it runs three slow tasks.
    await browser.send('g', 'j', 'j');
    await browser.waitForScreen(
      (current) => current.split('\n').some((line) => line.startsWith('>') && line.includes('1/4')),
      'the first checkpoint',
    );
    await browser.send('f', 'Enter');
    await browser.waitForScreen((current) => current.includes('task 2 Step 2 started'), 'the run to start');
    await browser.send('C-c');
    expect(await browser.exitStatus()).toBe('130');

    const provider = await providerOf('json');
    const all = await provider.list(provider.resolveLocation(location));
    const fork = all.filter((checkpoint) => checkpoint.branch !== 'main');
    expect(fork.map((checkpoint) => checkpoint.trigger)).toContain('SIGINT');
    // The run stopped: the fork never completed all four tasks.
    expect(fork.every((checkpoint) => (checkpoint.entities[0]?.completed ?? 0) < 4)).toBe(true);
    // Once the terminal is given back: the command that continues the run, as resume and fork say it.
    const interrupted = fork.find((checkpoint) => checkpoint.trigger === 'SIGINT')!;
    const short = interrupted.id.slice(interrupted.id.lastIndexOf('-') + 1);
    const said = await readFile(stderrFile, 'utf8');
    // One hint, naming the checkpoint written on SIGINT (the last one): a hint said at the signal
    // named the one before it too, and following that forked (trial 1127 A).
    expect(said.match(/continue it with|start over with/g), said).toHaveLength(1);
    expect(said).toContain(
      `the run stopped after checkpoint ${short} on branch ${interrupted.branch}; continue it with: crewline checkpoint resume ${short} --location ./.checkpoints`,
    );
  }, 120_000);

  it('says the command that starts over with the edits and the branch, when no checkpoint was written', async () => {
    // The trial (s8, finding 1): the edits live in the browser's memory only, and the hint left them
    // out; following it ran the Writer on the original research.
    const stderrFile = join(project, 'stderr-start-over.txt');
    const browser = openSession(['checkpoint', '--location', './plain'], {
      cwd: project,
      env: { NO_COLOR: '1' },
      stderrFile,
    });
    await browser.waitForScreen((current) => current.includes('crew Plain crew (4)'), 'the tree');
    await browser.send('g', 'j', 'j');
    await browser.waitForScreen(
      (current) => current.split('\n').some((line) => line.startsWith('>') && line.includes('1/4')),
      'the first checkpoint',
    );
    await browser.send('2');
    await browser.waitForScreen((current) => current.includes('[Tasks]'), 'the tasks tab');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await browser.send('C-u');
    await browser.type("MY EDIT, it's mine");
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('*edited'), 'the edit to be kept');
    await browser.send('f');
    await browser.waitForScreen((current) => current.includes('Fork: new branch name'), 'the prompt');
    await browser.type('try-it');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('task 2 Step 2 started'), 'the run to start');
    await browser.send('C-c');
    expect(await browser.exitStatus()).toBe('130');

    const provider = await providerOf('json');
    const all = await provider.list(provider.resolveLocation(plainLocation));
    const first = all.find(
      (checkpoint) => checkpoint.branch === 'main' && checkpoint.entities[0]?.completed === 1,
    )!;
    expect(all.filter((checkpoint) => checkpoint.branch === 'try-it')).toEqual([]);
    const short = first.id.slice(first.id.lastIndexOf('-') + 1);
    const said = await readFile(stderrFile, 'utf8');
    expect(said).toContain(
      `interrupted before this fork wrote a checkpoint; start over with: crewline checkpoint fork ${short} --location ./plain --branch try-it --set-output '1=MY EDIT, it'\\''s mine'`,
    );
  }, 120_000);
});
