import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { hasTmux, TmuxSession } from '../test-support/tmux-session.js';

// Task h2 #3: the browser guesses pastes on a terminal that has not marked one yet (tmux marks them,
// but only once something is pasted). Text and Enter typed in one read saved the editor, then every
// read of several keys was dropped as "pasted text dropped" until a key came alone.
let session: TmuxSession | undefined;
afterEach(() => {
  session?.kill();
  session = undefined;
});

/** Writes `text` to the terminal in one write, as a fast typist or a script does. */
function write(browser: TmuxSession, text: string): void {
  execFileSync('tmux', ['send-keys', '-t', browser.name, '-l', text]);
}

describe.skipIf(!hasTmux)('keys read together before any paste (tmux)', () => {
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

  it('takes the keys read together after a line typed with its Enter', async () => {
    const browser = new TmuxSession(['checkpoint'], { cwd: project.path, env: { NO_COLOR: '1' } });
    session = browser;
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    await browser.send('Tab', '2');
    await browser.waitForScreen((current) => current.includes('[x] 1. research'), 'the tasks tab');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await browser.send('C-u');
    write(browser, 'TYPED FAST\r');
    await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    // Two downs in one read: the cursor leaves task 1 for task 3.
    write(browser, 'jj');
    const text = await browser.waitForScreen(
      (current) => /^.*\| > .*3\. /m.test(current) || current.includes('dropped'),
      'the cursor on task 3',
    );
    expect(text).not.toContain('dropped');
    expect(text).toMatch(/\| > .*3\. /);
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
