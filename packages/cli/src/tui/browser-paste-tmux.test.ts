import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { editFirstTaskOutput, useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux, type TmuxSession } from '../test-support/tmux-session.js';

// Review r-tui finding 1: a 9 KB paste of 200 lines reaches the program in reads of at most 4095
// bytes; one ending on a line break saved part of the text and closed the editor, and the rest ran as
// browser keys: `every…` opened a resume and a later `y` confirmed it (a paid run), `q` quits. The
// browser turns on bracketed paste, so tmux's `paste-buffer -p` marks the paste as a terminal does.
describe.skipIf(!hasTmux)('a paste bigger than one read (tmux)', () => {
  const project = useBrowserProject('json');
  let pasted: string;

  // After useBrowserProject's beforeAll (before-hooks run in the order registered): the project is made.
  beforeAll(async () => {
    pasted = join(project.path, 'pasted.txt');
    await writeFile(pasted, `${'every tide pool we saw held crabs and fish..'}\n`.repeat(200));
  });

  function paste(browser: TmuxSession, file = pasted): void {
    execFileSync('tmux', ['load-buffer', '-b', browser.name, file]);
    execFileSync('tmux', ['paste-buffer', '-p', '-d', '-b', browser.name, '-t', browser.name]);
  }

  // Review r-wave3a finding 1: the big paste above stays text without bracketed paste too (its reads
  // hold line breaks before their ends). One line and its line break in one read is only a paste by
  // the terminal's marks: without them it is a line typed and Enter, which saves.
  it('asks the terminal to mark pastes: one pasted line and its line break stay in the editor', async () => {
    const oneLine = join(project.path, 'one-line.txt');
    await writeFile(oneLine, 'one pasted line\n');
    const browser = project.open();
    await editFirstTaskOutput(browser);
    paste(browser, oneLine);
    await browser.waitForScreen((current) => current.includes('one pasted line'), 'the pasted line');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const text = browser.screen();
    expect(text).toContain('Edit output of task 1');
    expect(text).not.toContain('*edited');
    await browser.send('Enter');
    await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);

  it('stays text in the editor, and outside it is dropped: no run, no quit', async () => {
    const browser = project.open();
    await editFirstTaskOutput(browser);
    paste(browser);
    // The editor follows the cursor: the last pasted line and the empty line after it (wrapped
    // between words in the 43 columns of the panel).
    await browser.waitForScreen(
      (current) => current.includes('Edit output of task 1') && current.includes('held crabs and'),
      'the pasted text in the editor',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    let text = browser.screen();
    expect(text).toContain('Edit output of task 1');
    expect(text).not.toMatch(/Resum|Resume this checkpoint/);
    await browser.send('Enter');
    text = await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    expect(text).not.toMatch(/Resum/);
    // Outside an editor: dropped, said so.
    await browser.send('Tab');
    paste(browser);
    text = await browser.waitForScreen(
      (current) => current.includes('pasted text dropped'),
      'the paste dropped',
    );
    expect(text).not.toMatch(/Resum/);
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 90_000);
});
