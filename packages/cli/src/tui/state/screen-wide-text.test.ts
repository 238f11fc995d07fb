import { describe, expect, it } from 'vitest';
import { openSampleBrowser } from '../../test-support/drive-browser.js';
import { wrapText } from './line-fitting.js';
import { renderScreen, screenText } from './screen.js';
import { textColumns } from './terminal-columns.js';
import { textBuffer } from './text-editor.js';

// wrapText counted code points while clipLine counts columns: a wrapped CJK line was twice as wide
// as the panel and cut again with ~, half of it lost.
describe('wide text wrapped in the detail panel', () => {
  it('wraps by terminal columns, each line within the width, nothing lost', () => {
    const text = `ab${'結果'.repeat(30)}`;
    const lines = wrapText(text, 9);
    expect(lines.join('')).toBe(text);
    for (const line of lines) expect(textColumns(line)).toBeLessThanOrEqual(9);
    // A wide character that would straddle the edge goes to the next line.
    expect(lines[0]).toBe('ab結果結');
  });

  it('shows the whole of a run output in CJK at 80x24', async () => {
    const { driver, sample } = await openSampleBrowser();
    const output = '結果'.repeat(60);
    driver.state = {
      ...driver.state,
      run: {
        mode: 'resume',
        checkpointId: sample.main[0]!.id,
        status: 'finished',
        lines: ['task 1 done'],
        result: { branch: 'main', output, lastCheckpoint: sample.main[0]!.reference } as never,
      },
    };
    const text = screenText(renderScreen(driver.state, { width: 80, height: 24, now: Date.now() }));
    expect((text.match(/[結果]/g) ?? []).length).toBe(120);
  });

  it('keeps the editor cursor on screen after 60 CJK characters at 80 columns, at its column', async () => {
    const { driver, sample } = await openSampleBrowser();
    driver.state = {
      ...driver.state,
      run: { mode: 'resume', checkpointId: sample.main[0]!.id, status: 'finished', lines: [] } as never,
      editor: { target: { kind: 'answer' }, buffer: textBuffer('日本語'.repeat(20)) },
    };
    const lines = renderScreen(driver.state, { width: 80, height: 24, now: Date.now() });
    const cursorLine = lines.find((line) => line.some((segment) => segment.inverse));
    expect(cursorLine).toBeDefined();
    // The cursor after the text: every character shown before it, nothing cut with ~.
    const text = screenText(lines);
    expect((text.match(/[日本語]/g) ?? []).length).toBe(60);
    expect(text).not.toMatch(/[日本語]~/);
  });
});

// The editor drew its cursor by wrapping the text up to one code point after the cursor: a cursor
// inside an emoji sequence drew part of it, and a heart with its emoji selector (❤️, two columns)
// wrapped there otherwise than in the full text, the cursor drawn as a blank on the row above.
describe('the editor cursor on graphemes', () => {
  async function editorScreen(text: string, cursor: number) {
    const { driver, sample } = await openSampleBrowser();
    driver.state = {
      ...driver.state,
      run: { mode: 'resume', checkpointId: sample.main[0]!.id, status: 'finished', lines: [] } as never,
      editor: { target: { kind: 'answer' }, buffer: { text, cursor } },
    };
    const lines = renderScreen(driver.state, { width: 80, height: 24, now: Date.now() });
    const cursorLines = lines.filter((line) => line.some((segment) => segment.inverse));
    return {
      lines,
      cursorLines,
      cursor: cursorLines.flatMap((line) => line.filter((s) => s.inverse).map((s) => s.text)),
    };
  }

  it('draws the cursor on a whole emoji sequence, at any code point of it', async () => {
    const family = '👨‍👩‍👧';
    for (const cursor of [2, 3, 4, 5, 6]) {
      expect((await editorScreen(`ab${family}cd`, cursor)).cursor).toEqual([family]);
    }
  });

  it('draws the cursor on a heart with its selector that wraps at the edge, on the row it is shown', async () => {
    // At 78 'a's the heart's two columns do not fit on the panel's row: it starts the next one.
    for (const before of [77, 78, 79]) {
      const shown = await editorScreen(`${'a'.repeat(before)}❤️zz`, before);
      expect(shown.cursor).toEqual(['❤️']);
      expect(shown.cursorLines).toHaveLength(1);
    }
  });
});

// Task h2 #4: the editor wrapped its text inside words at the panel's edge, as wrapText did.
describe('the editor wrapping between words', () => {
  // Every word once: a word cut at a row's end is missing whole from the screen.
  const answer = Array.from({ length: 30 }, (_, index) => `word${index}`).join(' ');

  async function answerScreen(cursor: number) {
    const { driver, sample } = await openSampleBrowser();
    driver.state = {
      ...driver.state,
      run: { mode: 'resume', checkpointId: sample.main[0]!.id, status: 'finished', lines: [] } as never,
      editor: { target: { kind: 'answer' }, buffer: { text: answer, cursor } },
    };
    return renderScreen(driver.state, { width: 80, height: 24, now: Date.now() });
  }

  it('ends its rows between words, the cursor on its character', async () => {
    for (const cursor of [0, 77, 78, 79, 150, answer.length]) {
      const lines = await answerScreen(cursor);
      const shown = new Set(screenText(lines).split(/\s+/));
      for (const word of answer.split(' ')) expect(shown, word).toContain(word);
      const drawn = lines.flatMap((line) => line.filter((segment) => segment.inverse).map((s) => s.text));
      expect(drawn).toEqual([answer[cursor] ?? ' ']);
    }
  });
});

// wrapText counted an escape character as no column, while the screen shows it escaped (\x1b, four
// columns): a run output with colour codes was wrapped too wide and its end cut with ~.
describe('control characters wrapped in a panel', () => {
  it('wraps text as it is shown, control characters escaped, each line within the width', () => {
    const lines = wrapText(`${'\x1b[31mred\x1b[0m '.repeat(6)}END`, 20);
    for (const line of lines) expect(textColumns(line)).toBeLessThanOrEqual(20);
    // Between words: the spaces where lines end are dropped.
    expect(lines.join(' ')).toBe(`${'\\x1b[31mred\\x1b[0m '.repeat(6)}END`);
  });

  it('shows the whole of a run output with colour codes at 80x24', async () => {
    const { driver, sample } = await openSampleBrowser();
    const output = `${Array.from({ length: 12 }, (_, index) => `\x1b[31mred${index}\x1b[0m`).join(' ')} END`;
    driver.state = {
      ...driver.state,
      run: {
        mode: 'resume',
        checkpointId: sample.main[0]!.id,
        status: 'finished',
        lines: ['task 1 done'],
        result: { branch: 'main', output, lastCheckpoint: sample.main[0]!.reference } as never,
      },
    };
    const text = screenText(renderScreen(driver.state, { width: 80, height: 24, now: Date.now() }));
    expect(text).toContain('END');
    expect(text).toContain('red11');
    expect(text).not.toMatch(/~\s*$/m);
  });
});

// Ink lays the screen out with string-width: a line measured otherwise is cut or wrapped again by Ink.
describe('columns as Ink counts them', () => {
  it('counts the characters the old rules got wrong as string-width does', () => {
    expect(textColumns('䷄䷄')).toBe(4); // hexagrams: wide
    expect(textColumns('☷')).toBe(2);
    expect(textColumns('soft\u00adhyphen')).toBe(10); // a soft hyphen takes no column
  });
});
