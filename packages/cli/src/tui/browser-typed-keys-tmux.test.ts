import { describe, expect, it } from 'vitest';
import { editFirstTaskOutput, useBrowserProject } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// Task h2 #3: the browser guesses pastes on a terminal that has not marked one yet (tmux marks them,
// but only once something is pasted). Text and Enter typed in one read saved the editor, then every
// read of several keys was dropped as "pasted text dropped" until a key came alone.
describe.skipIf(!hasTmux)('keys read together before any paste (tmux)', () => {
  const project = useBrowserProject('json');

  it('takes the keys read together after a line typed with its Enter', async () => {
    const browser = project.open();
    await editFirstTaskOutput(browser);
    browser.typeInOneRead('TYPED FAST\r');
    await browser.waitForScreen((current) => current.includes('*edited'), 'the edit saved');
    // Two downs in one read: the cursor leaves task 1 for task 3.
    browser.typeInOneRead('jj');
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
