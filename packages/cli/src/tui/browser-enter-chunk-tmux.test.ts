import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { hasTmux, TmuxSession } from '../test-support/tmux-session.js';

// A new-user trial (s11, finding 4): text and Enter that reach the program in one read (a fast
// typist, a slow link, `tmux send-keys -l "xyz<CR>"`) left the editor open with a line break; Ink
// reports Enter only for a read that is exactly a carriage return.
let session: TmuxSession | undefined;
afterEach(() => {
  session?.kill();
  session = undefined;
});

describe.skipIf(!hasTmux)('Enter in the same read as typed text (tmux)', () => {
  let project: { path: string; remove: () => Promise<void> };
  let run: CrewRun;

  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun('json', project.path);
  });
  afterAll(async () => {
    await run?.close();
    await project?.remove();
  });

  it('saves the edit', async () => {
    const browser = new TmuxSession(['checkpoint'], { cwd: project.path, env: { NO_COLOR: '1' } });
    session = browser;
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    await browser.send('Tab', '2');
    await browser.waitForScreen((current) => current.includes('[x] 1. research'), 'the tasks tab');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await browser.send('C-u');
    // One write: the text and the carriage return Enter sends.
    execFileSync('tmux', ['send-keys', '-t', browser.name, '-l', 'xyz\r']);
    const text = await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    expect(text).not.toContain('Edit output of task 1');
    expect(text).toContain('xyz');
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
