import { describe, expect, it } from 'vitest';
import { openSampleBrowser } from '../../test-support/drive-browser.js';
import { key } from './key-press.js';
import { renderScreen, screenText } from './screen.js';
import { selectedCheckpoint } from './selection.js';
import { update } from './update.js';

describe('browser state machine', () => {
  it('selects the newest checkpoint first and loads its detail', async () => {
    const { sample, driver } = await openSampleBrowser();
    expect(driver.state.selectedKey).toBe(sample.other.at(-1)!.id);
    expect(driver.effects).toContainEqual(
      expect.objectContaining({ type: 'load-detail', checkpointId: sample.other.at(-1)!.id }),
    );
    expect(driver.state.detail?.status).toBe('ready');
  });

  it('moves with arrows and j/k, collapses and expands with left/right', async () => {
    const { sample, driver } = await openSampleBrowser();
    const writingMain = `crew:Writing/branch:main/run:${sample.other[0]!.lineageId}`;
    await driver.press('g');
    expect(driver.state.selectedKey).toBe('crew:Writing');
    await driver.press('down');
    expect(driver.state.selectedKey).toBe(writingMain);
    await driver.press('left');
    expect(driver.state.collapsed.has(writingMain)).toBe(true);
    await driver.press('j');
    expect(driver.state.selectedKey).toBe('crew:Research');
    await driver.press('k', 'right');
    expect(driver.state.collapsed.has(writingMain)).toBe(false);
    await driver.press('up');
    expect(driver.state.selectedKey).toBe('crew:Writing');
    expect(selectedCheckpoint(driver.state)).toBeUndefined();
  });

  it('takes letters that arrive together (held key, paste, SSH) as one key each', async () => {
    const { driver } = await openSampleBrowser();
    await driver.press('g', 'down', 'down', 'down');
    const afterThreeDowns = driver.state.selectedKey;
    await driver.press('g', 'jjj');
    expect(driver.state.selectedKey).toBe(afterThreeDowns);
    await driver.press('kk');
    await driver.press('down', 'down');
    expect(driver.state.selectedKey).toBe(afterThreeDowns);
    // Once a chunk opens an editor, the rest of it is text typed into that editor.
    await driver.press('fmy-branch');
    expect(driver.state.confirm?.mode).toBe('fork');
    expect(driver.state.editor?.target).toEqual({ kind: 'branch' });
    expect(driver.state.editor?.buffer.text).toBe('my-branch');
  });

  it('edits a completed task output, refuses a pending one, and undoes an edit', async () => {
    const { sample, driver } = await openSampleBrowser();
    // Select the third main checkpoint of Research: task 2 started, task 1 done.
    const target = sample.main[2]!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('tab', 'right');
    expect(driver.state.focus).toBe('detail');
    expect(driver.state.tab).toBe('tasks');
    await driver.press('down', 'return');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.state.message).toMatch(/task 2 is running/);
    await driver.press('up', 'return');
    expect(driver.state.editor?.target).toEqual({ kind: 'output', index: 0 });
    await driver.press(key('u', { ctrl: true }));
    await driver.type('Edited findings');
    await driver.press('return');
    expect(driver.state.edits[target.id]?.outputs).toEqual({ 0: 'Edited findings' });
    expect(driver.state.message).toMatch(/re-runs the 2 tasks after it/);
    await driver.press('u');
    expect(driver.state.edits[target.id]?.outputs).toEqual({});
  });

  it('takes a carriage return at the end of a chunk of text as Enter: in an editor and the branch prompt', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main[3]!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('2', 'return', key('u', { ctrl: true }));
    await driver.press('xyz\r');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.state.edits[target.id]?.outputs).toEqual({ 0: 'xyz' });
    // The branch name and Enter in one read, once the prompt is open.
    await driver.press('f', 'what-if\r');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.effects.find((effect) => effect.type === 'start-run')).toEqual({
      type: 'start-run',
      request: {
        mode: 'fork',
        checkpointId: target.id,
        reference: target.reference,
        branch: 'what-if',
        taskOutputs: { 0: 'xyz' },
      },
    });
  });

  // Review r-tui finding 1: keys read together that open a resume or fork never confirm it too (a
  // paste read as keys, `every…` then a `y`, started a paid resume). dc02bee had `e` and Enter in one
  // read confirm; now the Enter of that read is dropped and the confirmation waits.
  it('never confirms a resume or fork with keys of the read that opened it', async () => {
    const { sample, driver } = await openSampleBrowser();
    const head = sample.main.at(-1)!;
    while (driver.state.selectedKey !== head.id) await driver.press('down');
    await driver.press('e\r');
    expect(driver.state.confirm?.mode).toBe('resume');
    await driver.press('escape', 'ey');
    expect(driver.state.confirm?.mode).toBe('resume');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    // Task h8 #1: nor does the next read of several keys (the rest of a paste cut into reads, on a
    // terminal that has not marked a paste); it says why. A key read alone confirms.
    await driver.press('yy');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    expect(driver.state.message).toMatch(/y read with other keys .* does not resume: press it alone/);
    await driver.press('y');
    expect(driver.effects.at(-1)).toEqual({
      type: 'start-run',
      request: { mode: 'resume', checkpointId: head.id, reference: head.reference },
    });
    await driver.dispatch({ type: 'run-failed', error: 'x' });
    await driver.press('x');
    // The fork's key, its branch and Enter in one read: the branch is named, the fork waits for Enter.
    await driver.press('fwhat-if\r');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.state.confirm).toMatchObject({ mode: 'fork', branch: 'what-if' });
    expect(driver.effects.filter((effect) => effect.type === 'start-run')).toHaveLength(1);
    await driver.press('return');
    expect(driver.effects.at(-1)).toMatchObject({
      type: 'start-run',
      request: { mode: 'fork', branch: 'what-if' },
    });
  });

  // Task h8 #1 (review R3): on a terminal without bracketed paste (or before its first paste mark) a
  // paste reaching the browser in two reads started paid runs: `xe` then `xy` a resume, `zfoo` then
  // `bar` and a carriage return a fork (the branch editor saved, the fork confirmed).
  it('confirms or saves what a read of several keys opened only on a key read alone', async () => {
    const { sample, driver } = await openSampleBrowser();
    const head = sample.main.at(-1)!;
    while (driver.state.selectedKey !== head.id) await driver.press('down');
    const started = () => driver.effects.filter((effect) => effect.type === 'start-run');
    await driver.press('xe', 'xy');
    expect(driver.state.confirm?.mode).toBe('resume');
    expect(driver.state.message).toMatch(/y read with other keys .* press it alone/);
    await driver.press('escape', 'zfoo', 'bar\r');
    expect(driver.state.editor).toMatchObject({ target: { kind: 'branch' }, buffer: { text: 'oobar\n' } });
    await driver.press('yy');
    expect(driver.state.editor?.buffer.text).toBe('oobar\nyy');
    expect(started()).toHaveLength(0);
    // A key alone is typed: after it, keys read together are typed as usual, and Enter forks.
    await driver.press(key('u', { ctrl: true }), 'foo', 'return');
    expect(driver.effects.at(-1)).toMatchObject({
      type: 'start-run',
      request: { mode: 'fork', branch: 'foo' },
    });
    await driver.dispatch({ type: 'run-failed', error: 'x' });
    await driver.press('x');
    // `f` read alone, then a name and Enter read together, is typing: it forks.
    await driver.press('f', 'what-if\r');
    expect(started()).toHaveLength(2);
    expect(started().at(-1)).toMatchObject({ request: { mode: 'fork', branch: 'what-if' } });
    await driver.dispatch({ type: 'run-failed', error: 'x' });
    await driver.press('x');
    // Once the terminal has marked a paste, reads are not guessed at: `xe` then `xy` was typed.
    await driver.press('paste-start', 'paste-end', 'xe', 'xy');
    expect(started()).toHaveLength(3);
  });

  // Task h8 #2 (review R3): `approve` and its Enter read together on a paused run's panel opened the
  // answer editor and sent the answer, continuing the flow (a paid run) from one read.
  it('keeps an answer typed in the read that opened its editor until Enter comes alone', async () => {
    const { sample, driver } = await openSampleBrowser();
    const paused = sample.main[0]!;
    driver.state = {
      ...driver.state,
      run: {
        mode: 'resume',
        checkpointId: paused.id,
        status: 'finished',
        lines: [],
        result: {
          branch: 'main',
          output: '',
          pause: {
            methodName: 'review',
            message: 'ok?',
            checkpoint: { id: paused.id, reference: paused.reference },
          },
        },
      },
    };
    await driver.press('approve\r');
    expect(driver.state.editor).toMatchObject({ target: { kind: 'answer' }, buffer: { text: 'pprove' } });
    expect(driver.state.message).toMatch(/does not send the answer: press it alone/);
    // The next read of several keys is text too (no paste mark yet); a key alone sends it.
    await driver.press('d\r');
    expect(driver.state.editor?.buffer.text).toBe('pproved\n');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    await driver.press('backspace', 'return');
    expect(driver.effects.at(-1)).toMatchObject({ type: 'start-run' });
  });

  // Task h8 #5 (review R3): the confirmation scrolled as far as it would in the narrowest layout, so
  // after holding j on a larger screen k did nothing for many presses.
  it('scrolls the confirmation only as far as the screen last drawn needs', async () => {
    const { sample, driver } = await openSampleBrowser();
    const size = { width: 80, height: 14, now: Date.now() };
    await driver.dispatch({ type: 'resize', width: size.width, height: size.height });
    const older = sample.main[1]!;
    while (driver.state.selectedKey !== older.id) await driver.press('down');
    await driver.press('2', 'return', key('u', { ctrl: true }), 'edited\r', 'e');
    const shown = () => screenText(renderScreen(driver.state, size));
    for (let step = 0; step < 40; step += 1) await driver.press('j');
    const atEnd = shown();
    await driver.press('k');
    expect(shown()).not.toBe(atEnd);
    // A screen where it all fits: the scroll is cut to none, j does not scroll.
    await driver.press('j', 'j', 'j');
    expect(driver.state.confirm?.scroll).toBeGreaterThan(0);
    await driver.dispatch({ type: 'resize', width: 120, height: 16 });
    expect(driver.state.confirm?.scroll).toBe(0);
    await driver.press('j');
    expect(driver.state.confirm?.scroll).toBe(0);
  });

  // Task h2 #1: the plan of a resume is looked up after `e` (a store read); `e` then a quick `y`
  // started the paid run while the panel still said "checking", its warning unseen.
  it('confirms a resume only once its plan is shown: Enter or y before that does nothing', async () => {
    const { sample, driver } = await openSampleBrowser();
    const older = sample.main[1]!;
    while (driver.state.selectedKey !== older.id) await driver.press('down');
    // The plan's lookup is left in flight: `update` alone, the load-plan effect not carried out.
    const asked = update(driver.state, { type: 'key', key: key('e') });
    expect(asked.effects).toContainEqual(expect.objectContaining({ type: 'load-plan' }));
    let state = asked.state;
    for (const pressed of [key('y'), key('return'), key('yy')]) {
      const next = update(state, { type: 'key', key: pressed });
      expect(next.effects).toEqual([]);
      state = next.state;
    }
    expect(state.confirm?.plan?.status).toBe('checking');
    expect(state.message).toMatch(/once the plan below is shown/);
    driver.state = state;
    const plan = asked.effects.find((effect) => effect.type === 'load-plan')!;
    await driver.dispatch({ type: 'plan-failed', checkpointId: older.id, error: 'store offline' });
    expect(plan).toMatchObject({ checkpointId: older.id });
    expect(driver.state.message).toBeUndefined();
    await driver.press('y');
    expect(driver.effects.at(-1)).toMatchObject({ type: 'start-run', request: { checkpointId: older.id } });
  });

  it('takes a read of several keys with a line break before its end as pasted text, not keys', async () => {
    const { driver } = await openSampleBrowser();
    const before = driver.state.selectedKey;
    await driver.press('jj\rq\r');
    expect(driver.state.selectedKey).toBe(before);
    expect(driver.effects.some((effect) => effect.type === 'exit')).toBe(false);
    expect(driver.state.message).toMatch(/pasted text dropped/);
  });

  // Task h2 #3: before the terminal has marked a paste, a line typed with its Enter in one read saved
  // the editor, then every read of several keys was dropped ("pasted text dropped") until a key came
  // alone. Keys without a line break are keys; a read that may end a paste still neither quits nor
  // confirms.
  it('takes keys read together after a line typed with its Enter, before any paste mark', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main.at(-1)!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('2', 'down', 'down');
    const cursor = driver.state.detailCursor;
    await driver.press('return', 'TYPED FAST\r');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.state.edits[target.id]?.outputs[cursor]).toMatch(/TYPED FAST$/);
    await driver.press('kk');
    expect(driver.state.message ?? '').not.toMatch(/dropped/);
    expect(driver.state.detailCursor).toBe(cursor - 2);
    // What may be the rest of a paste: no quit, no undo, no confirmation, and a line break is not keys.
    await driver.press('jj', 'uu');
    // Task h8 #6: the status line says why (the key looked lost).
    expect(driver.state.message).toMatch(/u read with other keys .* does not undo: press it alone/);
    await driver.press('kq');
    expect(driver.state.message).toMatch(/q read with other keys .* does not quit: press it alone/);
    await driver.press('ey', 'more\r');
    expect(driver.state.edits[target.id]?.outputs[cursor]).toMatch(/TYPED FAST$/);
    expect(driver.effects.some((effect) => effect.type === 'exit' || effect.type === 'start-run')).toBe(
      false,
    );
    expect(driver.state.detailCursor).toBe(cursor - 1);
    expect(driver.state.confirm?.mode).toBe('resume');
    expect(driver.state.message).toMatch(/pasted text dropped/);
    // A key alone ends the guess.
    await driver.press('y');
    expect(driver.effects.at(-1)).toMatchObject({ type: 'start-run' });
  });

  // An editor opened by such a read does not save on a later read's line break: the fork's branch
  // name would confirm the fork (a paid run), an answer would continue the flow.
  it('keeps a fork opened by keys read together after a saved line from confirming on the next read', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main.at(-1)!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('2', 'return', 'TYPED FAST\r', 'jf', 'what-if\r');
    expect(driver.state.editor?.target).toEqual({ kind: 'branch' });
    expect(driver.state.editor?.buffer.text).toBe('what-if\n');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    await driver.press('backspace', 'return');
    expect(driver.effects.at(-1)).toMatchObject({ type: 'start-run', request: { branch: 'what-if' } });
  });

  describe('bracketed paste', () => {
    // Review r-tui finding 1: the browser turns on bracketed paste; between the terminal's marks every
    // read is text, whatever it ends with.
    it('types a paste cut into reads into the editor whole, its line breaks included, and saves on Enter', async () => {
      const { sample, driver } = await openSampleBrowser();
      const target = sample.main[3]!;
      while (driver.state.selectedKey !== target.id) await driver.press('down');
      await driver.press('2', 'return', key('u', { ctrl: true }));
      await driver.press('paste-start', 'one\r', 'return', 'two\rthree\r', 'paste-end');
      expect(driver.state.editor?.buffer.text).toBe('one\n\ntwo\nthree\n');
      expect(driver.state.pasting).toBe(false);
      await driver.press('return');
      expect(driver.state.edits[target.id]?.outputs).toEqual({ 0: 'one\n\ntwo\nthree\n' });
    });

    it('drops a paste outside an editor, saying so: it neither quits nor starts a run', async () => {
      const { sample, driver } = await openSampleBrowser();
      const head = sample.main.at(-1)!;
      while (driver.state.selectedKey !== head.id) await driver.press('down');
      const before = driver.state.selectedKey;
      await driver.press('paste-start', 'every tide pool\r', 'return', 'q', 'e', 'y', 'paste-end');
      expect(driver.effects.some((effect) => effect.type === 'exit' || effect.type === 'start-run')).toBe(
        false,
      );
      expect(driver.state.confirm).toBeUndefined();
      expect(driver.state.selectedKey).toBe(before);
      expect(driver.state.message).toMatch(/pasted text dropped/);
      // After the end mark, keys are keys again.
      await driver.press('q');
      expect(driver.effects.at(-1)).toEqual({ type: 'exit' });
    });

    // Review r-wave3a finding 4: once the terminal has marked a paste, a read of typed text ending in
    // a carriage return (a fast typist, SSH, a script) is typed, not a paste cut into reads: the keys
    // of the next read were dropped as "pasted text dropped".
    it('takes the reads after a typed Enter as keys once the terminal has marked a paste', async () => {
      const { sample, driver } = await openSampleBrowser();
      const target = sample.main.at(-1)!;
      while (driver.state.selectedKey !== target.id) await driver.press('down');
      await driver.press('2', 'down', 'down');
      const cursor = driver.state.detailCursor;
      await driver.press('return', 'paste-start', 'pasted', 'paste-end');
      await driver.press('TYPED FAST\r');
      expect(driver.state.editor).toBeUndefined();
      expect(driver.state.edits[target.id]?.outputs[cursor]).toMatch(/pastedTYPED FAST$/);
      await driver.press('kk');
      expect(driver.state.message ?? '').not.toMatch(/dropped/);
      expect(driver.state.detailCursor).toBe(cursor - 2);
      // A read of keys with a line break inside is keys too: Enter opens the editor, the rest is text.
      await driver.press('j\rnew');
      expect(driver.state.editor?.buffer.text).toMatch(/new$/);
    });

    it('ends the paste on a key no paste holds (an end mark lost): Esc still cancels', async () => {
      const { sample, driver } = await openSampleBrowser();
      while (driver.state.selectedKey !== sample.main[3]!.id) await driver.press('down');
      await driver.press('2', 'return', 'paste-start', 'text', 'escape');
      expect(driver.state.pasting).toBe(false);
      expect(driver.state.editor).toBeUndefined();
      expect(driver.state.message).toBe('edit cancelled');
    });
  });

  it('edits inputs, keeping the type of non-string values, and lists placeholders without values', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main[0]!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('3');
    expect(driver.state.tab).toBe('inputs');
    const view = driver.state.detail!.view!;
    expect(view.placeholders).toEqual(['audience', 'topic']);
    await driver.press('return', key('u', { ctrl: true }));
    await driver.type('robots');
    await driver.press('return');
    expect(driver.state.edits[target.id]?.inputs).toEqual({ topic: 'robots' });
    await driver.press('return', 'escape');
    expect(driver.state.message).toBe('edit cancelled');
  });

  it('fork asks for a branch and starts a run with the edits; progress and result follow', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main[3]!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('2', 'return', key('u', { ctrl: true }));
    await driver.type('New first output');
    await driver.press('return', 'f');
    expect(driver.state.confirm?.mode).toBe('fork');
    expect(driver.state.editor?.target).toEqual({ kind: 'branch' });
    await driver.type('what-if');
    await driver.press('return');
    const start = driver.effects.find((effect) => effect.type === 'start-run');
    expect(start).toEqual({
      type: 'start-run',
      request: {
        mode: 'fork',
        checkpointId: target.id,
        reference: target.reference,
        branch: 'what-if',
        taskOutputs: { 0: 'New first output' },
      },
    });
    expect(driver.state.run?.status).toBe('running');
    await driver.press('q');
    expect(driver.effects.some((effect) => effect.type === 'exit')).toBe(false);
    await driver.dispatch({ type: 'run-progress', line: 'task 2 started' });
    await driver.dispatch({
      type: 'run-finished',
      result: { branch: 'what-if', output: 'done', lastCheckpoint: sample.main[0]!.reference },
    });
    expect(driver.state.run?.lines).toEqual(['task 2 started']);
    expect(driver.state.edits[target.id]).toBeUndefined();
    await driver.press('x');
    expect(driver.state.run).toBeUndefined();
    expect(driver.state.selectedKey).toBe(sample.main[0]!.id);
  });

  it('resume passes all inputs when one was edited, nothing extra otherwise; esc cancels', async () => {
    const { sample, driver } = await openSampleBrowser();
    const target = sample.main[1]!;
    while (driver.state.selectedKey !== target.id) await driver.press('down');
    await driver.press('e');
    expect(driver.state.confirm?.mode).toBe('resume');
    await driver.press('escape');
    expect(driver.state.confirm).toBeUndefined();
    await driver.press('3', 'down', 'return', key('u', { ctrl: true }));
    await driver.type('everyone');
    await driver.press('return', 'e', 'y');
    const start = driver.effects.find((effect) => effect.type === 'start-run');
    expect(start).toEqual({
      type: 'start-run',
      request: {
        mode: 'resume',
        checkpointId: target.id,
        reference: target.reference,
        inputs: { topic: 'AI', audience: 'everyone' },
      },
    });
  });

  it('ignores a detail that arrives after the selection moved on, and quits on q', async () => {
    const { sample, driver } = await openSampleBrowser();
    const before = driver.state;
    const stale = update(before, { type: 'detail-failed', checkpointId: 'someone-else', error: 'x' });
    expect(stale.state).toBe(before);
    await driver.press('?');
    expect(driver.state.showHelp).toBe(true);
    await driver.press('q');
    expect(driver.state.showHelp).toBe(false);
    await driver.press('q');
    expect(driver.effects.at(-1)).toEqual({ type: 'exit' });
    expect(sample.all.length).toBeGreaterThan(0);
  });

  it('answers a flow whose run ended paused and continues it from the pause checkpoint', async () => {
    const { driver } = await openSampleBrowser();
    await driver.press('e', 'return');
    const pause = {
      methodName: 'approve',
      message: 'Publish the essay?',
      checkpoint: { id: 'paused-id', reference: '/cp/main/paused-id.json' },
    };
    await driver.dispatch({ type: 'run-finished', result: { branch: 'main', output: 'paused', pause } });
    await driver.press('a');
    expect(driver.state.editor?.target).toEqual({ kind: 'answer' });
    await driver.type('yes');
    await driver.press('return');
    expect(driver.effects.at(-1)).toEqual({
      type: 'start-run',
      request: {
        mode: 'resume',
        checkpointId: 'paused-id',
        reference: '/cp/main/paused-id.json',
        humanInput: 'yes',
      },
    });
    expect(driver.state.run).toMatchObject({ status: 'running', checkpointId: 'paused-id' });
    expect(driver.state.editor).toBeUndefined();

    // Esc leaves the answer; any other key goes back to the checkpoints.
    await driver.dispatch({ type: 'run-finished', result: { branch: 'main', output: 'paused', pause } });
    await driver.press('a', 'escape');
    expect(driver.state.editor).toBeUndefined();
    expect(driver.state.run?.status).toBe('finished');
    await driver.press('x');
    expect(driver.state.run).toBeUndefined();
  });

  it('interrupts a running run on ctrl+c instead of quitting', async () => {
    const { driver } = await openSampleBrowser();
    await driver.press('f', 'return');
    expect(driver.state.run?.status).toBe('running');
    await driver.press(key('c', { ctrl: true }));
    expect(driver.effects.at(-1)).toEqual({ type: 'interrupt-run' });
    await driver.dispatch({ type: 'run-failed', error: 'interrupted' });
    expect(driver.state.run?.status).toBe('failed');
  });
});
