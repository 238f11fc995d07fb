import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDocument } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewDocument } from '../core/document-view.js';
import { providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { sourceCommand } from '../test-support/subprocess.js';

// The whole browser, for real: the crewline binary in a tmux pseudo-terminal of 80×24, keys typed
// one at a time, the screen read back with capture-pane. CI installs tmux (.ci/run); locally:
// apt-get install -y tmux.
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux) {
  console.warn(
    'SKIPPED: the real-terminal TUI test needs tmux, which is not installed (apt-get install -y tmux)',
  );
}

const session = `crewline-tui-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

function screen(): string {
  return tmux('capture-pane', '-p', '-t', session);
}

function sessionAlive(): boolean {
  return spawnSync('tmux', ['has-session', '-t', session]).status === 0;
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Sends keys one at a time, 200 ms apart: keys sent together reach the program as one input. */
async function send(...keys: string[]): Promise<void> {
  for (const key of keys) {
    tmux('send-keys', '-t', session, key);
    await pause(200);
  }
}

/** Types text one literal character at a time. */
async function type(text: string): Promise<void> {
  for (const character of text) {
    tmux('send-keys', '-t', session, '-l', character);
    await pause(200);
  }
}

async function waitForScreen(
  probe: (text: string) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!sessionAlive())
      throw new Error(`the browser exited while waiting for ${what}; last screen:\n${last}`);
    last = screen();
    if (probe(last)) return last;
    await pause(150);
  }
  throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
}

async function waitForExit(statusFile: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(statusFile)) {
      const status = readFileSync(statusFile, 'utf8').trim();
      if (status !== '') return status;
    }
    await pause(100);
  }
  throw new Error(`the browser did not quit; screen:\n${sessionAlive() ? screen() : '(session ended)'}`);
}

describe.skipIf(!hasTmux)('the checkpoint browser in a real terminal (tmux)', () => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;

  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun('json', project.path);
  });

  afterAll(async () => {
    if (sessionAlive()) tmux('kill-session', '-t', session);
    await run?.close();
    await project?.remove();
  });

  it('opens, selects a checkpoint, edits a task output, forks, and shows the run finish', async () => {
    const first = run.checkpoints[0]!;
    const command = [process.execPath, ...sourceCommand(['checkpoint'])]
      .map((part) => `'${part.replaceAll("'", "'\\''")}'`)
      .join(' ');
    // The shell writes the browser's exit status to a file once it ends.
    const statusFile = join(project.path, 'exit-status');
    const shell = `${command}; echo $? > '${statusFile}'`;
    tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      project.path,
      '-e',
      'NO_COLOR=1',
      shell,
    );

    let text = await waitForScreen(
      (current) => current.includes('crew Research crew (3)') && current.includes('[Overview]'),
      'the tree',
    );
    expect(text).toContain('crewline checkpoints');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(24);

    // The newest checkpoint (3/3) is selected; move up to the first one (1/3).
    await send('k', 'k');
    text = await waitForScreen((current) => current.includes(`Id       ${first.id}`), 'the first checkpoint');
    expect(text.split('\n').find((line) => line.startsWith('>'))).toContain('1/3');

    // Tasks tab, edit the output of task 1.
    await send('Tab', '2');
    await waitForScreen(
      (current) => current.includes('[Tasks]') && current.includes('[x] 1. research'),
      'the tasks tab',
    );
    await send('Enter');
    await waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await send('C-u');
    await type('TMUX EDIT');
    await send('Enter');
    text = await waitForScreen((current) => current.includes('*edited'), 'the edit to be kept');
    expect(text).toContain('TMUX EDIT');

    // Fork onto a named branch; the continuation runs for real.
    await send('f');
    await waitForScreen((current) => current.includes('Fork: name the new branch'), 'the branch prompt');
    await type('tmux');
    await send('Enter');
    text = await waitForScreen(
      (current) => current.includes('Run finished on branch tmux'),
      'the run to finish',
      60_000,
    );
    expect(text).toMatch(/task 2 outline started/);
    expect(text).toMatch(/task 3 write completed/);

    // Back to the tree: the new branch is there, nested under the checkpoint it came from.
    await send('Space');
    text = await waitForScreen((current) => current.includes('tmux (2)'), 'the new branch in the tree');

    await send('q');
    expect(await waitForExit(statusFile)).toBe('0');

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
