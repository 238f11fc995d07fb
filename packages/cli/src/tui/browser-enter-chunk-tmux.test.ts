import { describe, expect, it } from 'vitest';
import { editFirstTaskOutput, useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// A new-user trial (s11, finding 4): text and Enter that reach the program in one read (a fast
// typist, a slow link, `tmux send-keys -l "xyz<CR>"`) left the editor open with a line break; Ink
// reports Enter only for a read that is exactly a carriage return.
describe.skipIf(!hasTmux)('Enter in the same read as typed text (tmux)', () => {
  const project = useBrowserProject('json');

  it('saves the edit', async () => {
    const browser = project.open();
    await editFirstTaskOutput(browser);
    // One write: the text and the carriage return Enter sends.
    browser.typeInOneRead('xyz\r');
    const text = await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    expect(text).not.toContain('Edit output of task 1');
    expect(text).toContain('xyz');
    await browser.send('q');
    expect(await browser.exitStatus()).toBe('0');
  }, 60_000);
});
