import { describe, expect, it } from 'vitest';
import { useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// Task h2 #2: in a terminal of 80×14 the resume confirmation of an older checkpoint was cut at the
// bottom: the end of the plan's warning and the keys to press were not on screen.
describe.skipIf(!hasTmux)('the browser in an 80×14 terminal (tmux)', () => {
  const project = useBrowserProject('json');

  it('keeps the confirmation keys on screen and scrolls the plan with j', async () => {
    const browser = project.open({ width: 80, height: 14 });
    await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
    // The first checkpoint of the run: its resume goes on a new branch and runs tasks 2 and 3 again.
    const first = `Id       ${project.run.checkpoints[0]!.id}`;
    for (let step = 0; step < 5 && !browser.screen().includes(first); step += 1) await browser.send('k');
    await browser.waitForScreen((current) => current.includes(first), 'the first checkpoint');
    await browser.send('e');
    let text = await browser.waitForScreen((current) => current.includes('new branch'), 'the plan');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(14);
    expect(text).toContain('enter/y resume');
    expect(text).toContain('j/k more');
    for (let step = 0; step < 12 && !text.includes('purpose, fork'); step += 1) {
      await browser.send('j');
      text = browser.screen();
      expect(text).toContain('enter/y resume');
    }
    expect(text).toContain('purpose, fork');
    await browser.send('Escape');
    await browser.waitForScreen((current) => current.includes('resume cancelled'), 'the cancel');
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
