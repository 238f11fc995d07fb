import { describe, expect, it } from 'vitest';
import { editFirstTaskOutput, useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// Task h8 #1 (review R3): on a terminal that has not marked a paste (tmux marks them only once
// something is pasted with -p), a paste reaching the browser in two reads started paid runs: `xe`
// then `xy` a resume, `xfoo` then `bar` and a carriage return a fork. Each typeInOneRead is one such
// read: a paste's part.
describe.skipIf(!hasTmux)('a paste cut into two reads before any paste mark (tmux)', () => {
  const project = useBrowserProject('json');

  it('neither resumes nor forks until a key is read alone', async () => {
    const browser = project.open();
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    browser.typeInOneRead('xe');
    await browser.waitForScreen((current) => current.includes('Resume this checkpoint?'), 'the resume asked');
    browser.typeInOneRead('xy');
    let text = await browser.waitForScreen((current) => current.includes('press it alone'), 'why y waits');
    expect(text).toContain('Resume this checkpoint?');
    await browser.send('Escape');
    await browser.waitForScreen(
      (current) => !current.includes('Resume this checkpoint?'),
      'the resume cancelled',
    );
    browser.typeInOneRead('xfoo');
    await browser.waitForScreen((current) => current.includes('Fork: new branch name'), 'the fork asked');
    browser.typeInOneRead('bar\r');
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
    const browser = project.open();
    await editFirstTaskOutput(browser);
    browser.typeInOneRead('abcdef');
    await browser.waitForScreen((current) => current.includes('abcdef'), 'the text typed');
    browser.typeInOneRead('\x7f\x7f\x7f');
    const text = await browser.waitForScreen((current) => !current.includes('abcdef'), 'three deleted');
    expect(text).toMatch(/abc\s/);
    await browser.send('Escape', 'q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
