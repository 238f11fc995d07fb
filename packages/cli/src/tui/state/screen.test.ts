import { describe, expect, it } from 'vitest';
import { BrowserDriver } from '../../test-support/drive-browser.js';
import { sampleCheckpoints } from '../../test-support/sample-tree.js';
import { initialState } from './browser-state.js';
import { key } from './key-press.js';
import { clipLine, renderScreen, screenText, shortReference, wrapText } from './screen.js';

async function browser() {
  const sample = await sampleCheckpoints();
  const driver = new BrowserDriver(
    initialState({ location: sample.location, providerKind: 'memory' }),
    sample.provider,
    sample.location,
  );
  await driver.dispatch({ type: 'list-loaded', checkpoints: await driver.list() });
  return { sample, driver };
}

const size = { width: 80, height: 24, now: Date.now() };

function expectFits(text: string, width = 80, height = 24) {
  const lines = text.split('\n');
  expect(lines.length).toBeLessThanOrEqual(height - 1);
  for (const line of lines) expect(Array.from(line).length).toBeLessThan(width);
}

describe('renderScreen', () => {
  it('escapes control characters of stored strings: a tampered trigger or branch cannot drive the terminal', async () => {
    const { driver, sample } = await browser();
    const tampered = sample.all.map((checkpoint) =>
      checkpoint.id === sample.other.at(-1)!.id
        ? { ...checkpoint, trigger: 'task_\u001b[2J\u009b31mdone', branch: 'main\u0007\ttab' }
        : checkpoint,
    );
    await driver.dispatch({ type: 'list-loaded', checkpoints: tampered });
    await driver.press('g');
    const text = screenText(renderScreen(driver.state, size));
    const controls = Array.from(text)
      .map((character) => character.charCodeAt(0))
      .filter((code) => (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f));
    expect(controls).toEqual([]);
    expect(text).toContain('main\\x07\\x09tab');
    expect(screenText([clipLine([{ text: 'a\u001bb\tc\nd' }], 40)])).toBe('a\\x1bb\\x09c\\x0ad');
  });

  it('fits 80x24 with the tree and the detail side by side', async () => {
    const { driver, sample } = await browser();
    const text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain('crewline checkpoints');
    expect(text).toContain('crew Research (9)');
    expect(text).toContain('orphan (1) orphaned');
    expect(text).toContain(`Id       ${sample.other.at(-1)!.id}`.slice(0, 40));
    expect(text.split('\n').at(-1)).toContain('q quit');
  });

  it('keeps the selection in view in a long tree', async () => {
    const { driver } = await browser();
    await driver.press('G');
    const text = screenText(renderScreen(driver.state, { ...size, height: 14 }));
    expectFits(text, 80, 14);
    expect(text.split('\n').some((line) => line.startsWith('>'))).toBe(true);
  });

  it('shows each tab, the editor with its cursor, the fork prompt and the run screen within the size', async () => {
    const { driver, sample } = await browser();
    while (driver.state.selectedKey !== sample.main[3]!.id) await driver.press('down');
    await driver.press('2');
    let text = screenText(renderScreen(driver.state, size));
    expect(text).toContain('[Tasks]');
    expect(text).toContain('> [x] 1. Research {topic} for {audience}');
    expect(text).toContain('[ ] 3. Step 3 about {topic}');
    await driver.press('3');
    text = screenText(renderScreen(driver.state, size));
    expect(text).toContain('topic = "AI"');
    await driver.press('2', 'return', key('u', { ctrl: true }));
    await driver.type('x'.repeat(200));
    text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain('Edit output of task 1');
    await driver.press('return', 'f');
    text = screenText(renderScreen(driver.state, size));
    expect(text).toContain('Fork: name the new branch');
    await driver.press('escape', 'f', 'return');
    await driver.dispatch({ type: 'run-progress', line: 'task 2 started' });
    text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain(`Forking ${sample.main[3]!.id}  running...`);
    expect(text).toContain('task 2 started');
    for (let index = 0; index < 100; index += 1)
      await driver.dispatch({ type: 'run-progress', line: `line ${index}` });
    text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain('line 99');
    expect(text).not.toContain('line 10\n');
  });

  it('never draws narrower than the minimum layout', async () => {
    const { driver } = await browser();
    const text = screenText(renderScreen(driver.state, { width: 20, height: 5 }));
    expect(text.split('\n').length).toBeLessThanOrEqual(11);
  });
});

describe('line helpers', () => {
  it('shortens references to checkpoint ids', () => {
    expect(shortReference('/x/y.db#abc')).toBe('abc');
    expect(shortReference('/x/.checkpoints/main/20261121T094418396-cfc5c8a5_p-none.json')).toBe(
      '20261121T094418396-cfc5c8a5',
    );
    expect(shortReference('other')).toBe('other');
  });

  it('clips styled lines and pads them', () => {
    expect(clipLine([{ text: 'abc' }, { text: 'def', bold: true }], 5)).toEqual([
      { text: 'abc' },
      { text: 'd~', bold: true },
    ]);
    expect(clipLine([{ text: 'ab' }], 4, true)).toEqual([{ text: 'ab' }, { text: '  ' }]);
  });

  it('wraps keeping line breaks', () => {
    expect(wrapText('abcdef\n\nxy', 4)).toEqual(['abcd', 'ef', '', 'xy']);
  });
  it('shows what a paused flow asks, and the answer being typed', async () => {
    const { driver } = await browser();
    await driver.press('e', 'return');
    await driver.dispatch({
      type: 'run-finished',
      result: {
        branch: 'main',
        output: 'paused',
        pause: {
          methodName: 'approve',
          message: 'Publish the essay?',
          checkpoint: { id: 'paused-id', reference: '/cp/main/paused-id.json' },
        },
      },
    });
    let text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain('Paused on branch main: approve waits for an answer');
    expect(text).toContain('Publish the essay?');
    expect(text).toContain('a: answer and continue');
    await driver.press('a');
    await driver.type('yes');
    text = screenText(renderScreen(driver.state, size));
    expectFits(text);
    expect(text).toContain('Answer: Publish the essay?');
    expect(text).toContain('enter answer and continue');
    expect(text).toContain('yes');
  });
});
