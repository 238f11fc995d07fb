import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { hasTmux, TmuxSession } from '../test-support/tmux-session.js';

// Task h8 #1 (review R3): on a terminal that has not marked a paste (tmux marks them only once
// something is pasted with -p), a paste reaching the browser in two reads started paid runs: `xe`
// then `xy` a resume, `xfoo` then `bar` and a carriage return a fork.
let session: TmuxSession | undefined;
afterEach(() => {
  session?.kill();
  session = undefined;
});

/** Writes `text` to the terminal in one write: the browser reads it at once, as a paste's part. */
function write(browser: TmuxSession, text: string): void {
  execFileSync('tmux', ['send-keys', '-t', browser.name, '-l', text]);
}

describe.skipIf(!hasTmux)('a paste cut into two reads before any paste mark (tmux)', () => {
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

  it('neither resumes nor forks until a key is read alone', async () => {
    const browser = new TmuxSession(['checkpoint'], { cwd: project.path, env: { NO_COLOR: '1' } });
    session = browser;
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    write(browser, 'xe');
    await browser.waitForScreen((current) => current.includes('Resume this checkpoint?'), 'the resume asked');
    write(browser, 'xy');
    let text = await browser.waitForScreen((current) => current.includes('press it alone'), 'why y waits');
    expect(text).toContain('Resume this checkpoint?');
    await browser.send('Escape');
    await browser.waitForScreen(
      (current) => !current.includes('Resume this checkpoint?'),
      'the resume cancelled',
    );
    write(browser, 'xfoo');
    await browser.waitForScreen((current) => current.includes('Fork: new branch name'), 'the fork asked');
    write(browser, 'bar\r');
    text = await browser.waitForScreen((current) => current.includes('oobar'), 'the name typed');
    expect(text).toContain('Fork: new branch name');
    expect(text).not.toMatch(/Forking|Resuming|interrupts it/);
    await browser.send('Escape');
    await browser.waitForScreen(
      (current) => !current.includes('Fork this checkpoint?'),
      'the fork cancelled',
    );
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);

  // Task h8 #3: backspaces read together (a held Backspace over SSH) were typed as DEL characters.
  it('deletes three characters when three backspaces arrive in one read', async () => {
    const browser = new TmuxSession(['checkpoint'], { cwd: project.path, env: { NO_COLOR: '1' } });
    session = browser;
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    await browser.send('Tab', '2');
    await browser.waitForScreen((current) => current.includes('[x] 1. research'), 'the tasks tab');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
    await browser.send('C-u');
    write(browser, 'abcdef');
    await browser.waitForScreen((current) => current.includes('abcdef'), 'the text typed');
    write(browser, '\x7f\x7f\x7f');
    const text = await browser.waitForScreen((current) => !current.includes('abcdef'), 'three deleted');
    expect(text).toMatch(/abc\s/);
    await browser.send('Escape', 'q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
