import { describe, expect, it } from 'vitest';
import { openSampleBrowser } from '../../test-support/drive-browser.js';
import { key } from './key-press.js';

// Review r-tui finding 1 (the reviewer's test): a paste longer than one read (a pty delivers at most
// 4095 bytes per read; seen under tmux paste-buffer) arrives as several chunks. With dce107a a chunk
// that happens to end on a line break saved and closed the editor, and the next chunk was read as
// browser keys (`e`…`y` started a paid resume, `q` quit). These are terminals without bracketed paste.
async function editorOpen() {
  const { sample, driver } = await openSampleBrowser();
  const target = sample.main[3]!;
  while (driver.state.selectedKey !== target.id) await driver.press('down');
  await driver.press('2', 'return', key('u', { ctrl: true }));
  expect(driver.state.editor?.target.kind).toBe('output');
  return { driver, target };
}

const line = 'every tide pool we saw held crabs and fish..\r'; // 45 bytes: 91 lines = 4095
const first = line.repeat(91);
const second = line.repeat(91);

describe('a paste split across reads', () => {
  it('stays text in the editor (no run started, nothing lost)', async () => {
    const { driver, target } = await editorOpen();
    await driver.press(first);
    await driver.press(second);
    expect(driver.effects.filter((effect) => effect.type === 'start-run')).toEqual([]);
    await driver.press('return');
    // Every pasted line kept (182), in the one edit.
    expect(driver.state.edits[target.id]?.outputs[0]?.match(/every tide pool/g)?.length).toBe(182);
  });

  it('does not quit the browser (edits are in memory only)', async () => {
    const { driver } = await editorOpen();
    await driver.press('first line\r');
    await driver.press('quite a second line\r');
    expect(driver.effects.some((effect) => effect.type === 'exit')).toBe(false);
  });
});
