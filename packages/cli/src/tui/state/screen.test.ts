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

  it.each([
    // A persisted flow state's lane whose first saves retention pruned.
    ['flow-states/6f0d8a52-3c1e-4b7a-9d24-5e8b1f7c0a93', 'earlier pruned'],
    // A fork whose fork point was deleted.
    ['try-the-much-longer-outline-with-its-sources', 'orphaned'],
  ])(
    'keeps the mark of a lane with a long branch name at 80 columns, shortening the name (%s)',
    async (branch, mark) => {
      const { driver, sample } = await browser();
      const renamed = sample.all.map((checkpoint) =>
        checkpoint.id === sample.orphan.id ? { ...checkpoint, branch } : checkpoint,
      );
      await driver.dispatch({ type: 'list-loaded', checkpoints: renamed });
      const text = screenText(renderScreen(driver.state, size));
      expectFits(text);
      const lane = text.split('\n').find((line) => line.includes(branch.slice(0, 6)));
      expect(lane).toBeDefined();
      const tree = lane!.split(' | ')[0]!;
      expect(tree).toContain(`(1) ${mark}`);
      // The name is cut where it is, marked with ~, and still says which lane it is.
      expect(tree).toMatch(new RegExp(`${branch.slice(0, 4)}[^ ]*~ \\(1\\) ${mark}`));
    },
  );

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

describe('the run screen', () => {
  // A new-user trial (s8, finding 2): at 80×24 the failed screen showed the first 4 wrapped lines of
  // this error, cut at "so the edited output", above 15 empty rows; the fix at its end never showed.
  const longError =
    'checkpoint 20261127T200056512-5ec84e11: task 2 (Outline a report from: [offline model] slow answering: Co...) was run by a method of flow "ReportFlow" that already completed (completed: research, outline); a continuation keeps that method\'s crews and the value it returned as saved, so the edited output would reach nothing and the tasks after it would run again on unchanged inputs; to run that method again, re-run it and the methods after it from a saved state: rerunFrom the method that ran crew "Planner", one of research, outline (kickoff({ inputs: { id: "slow-report" }, rerunFrom: "METHOD" }), crewline checkpoint flows rerun slow-report --from METHOD)';
  // The screen wraps at the width, inside words too: compared without spaces and line breaks.
  const joined = (text: string) => text.replace(/\s+/g, '');
  const failed = (error: string, lines: string[] = ['task 3 started']) => ({
    ...initialState({ location: '/cp', providerKind: 'json' }),
    run: { mode: 'fork' as const, checkpointId: 'c1', status: 'failed' as const, lines, error },
  });

  it("shows a failed run's whole error at 80×24, its fix included", () => {
    const text = screenText(renderScreen(failed(longError), size));
    expectFits(text);
    expect(joined(text)).toContain(joined('so the edited output would reach nothing'));
    expect(joined(text)).toContain(joined('crewline checkpoint flows rerun slow-report --from METHOD)'));
    expect(text).toContain('task 3 started');
  });

  it('cuts an error too long for the screen in the middle, never its end', () => {
    const error = `${longError} ${'and more words '.repeat(120)}the fix is at the end`;
    const text = screenText(renderScreen(failed(error), size));
    expectFits(text);
    expect(text).toContain('checkpoint 20261127T200056512-5ec84e11');
    expect(text).toContain('…');
    expect(joined(text)).toContain(joined('the fix is at the end'));
  });

  it("shows a paused flow's whole question when the rows are there", () => {
    const question = `${'Which of these outlines should the report follow? '.repeat(6)}Answer one or two.`;
    const state = {
      ...initialState({ location: '/cp', providerKind: 'json' }),
      run: {
        mode: 'resume' as const,
        checkpointId: 'c1',
        status: 'finished' as const,
        lines: [],
        result: { branch: 'main', output: '', pause: { methodName: 'review', message: question } },
      },
    };
    const text = screenText(renderScreen(state, size));
    expectFits(text);
    expect(joined(text)).toContain(joined('Answer one or two.'));
  });
});
