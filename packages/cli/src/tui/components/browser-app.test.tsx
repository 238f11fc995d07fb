import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryHost, waitFor } from '../../test-support/memory-host.js';
import { sampleCheckpoints } from '../../test-support/sample-tree.js';
import { initialState } from '../state/browser-state.js';
import { BrowserApp } from './browser-app.js';

const keys = {
  down: '\u001B[B',
  up: '\u001B[A',
  right: '\u001B[C',
  enter: '\r',
  tab: '\t',
  clear: '\u0015',
  escape: '\u001B',
};

let unmount: (() => void) | undefined;
afterEach(() => {
  unmount?.();
  unmount = undefined;
});

async function openApp(styling: 'full' | 'monochrome' | 'none' = 'none') {
  const sample = await sampleCheckpoints();
  const host = new MemoryHost(sample.provider, sample.location);
  let exited = 0;
  const app = render(
    <BrowserApp
      initial={initialState({ location: sample.location, title: './memory', providerKind: 'memory' })}
      host={host}
      styling={styling}
      onExit={() => {
        exited += 1;
      }}
    />,
  );
  unmount = app.unmount;
  const frame = () => app.lastFrame() ?? '';
  const press = async (...sequence: string[]) => {
    for (const data of sequence) {
      app.stdin.write(data);
      // Ink reads input asynchronously; give it a moment as a terminal would.
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  };
  await waitFor(() => frame().includes('[x]') || frame().includes('Id '), 'the first checkpoint to load');
  return { sample, host, app, frame, press, exited: () => exited };
}

describe('BrowserApp', () => {
  it('shows the tree and the overview of the newest checkpoint within 24 rows', async () => {
    const { frame, sample } = await openApp();
    const text = frame();
    expect(text).toContain('crewline checkpoints');
    expect(text).toContain('11 checkpoints (memory)');
    expect(text).toContain('crew Writing (2)');
    expect(text).toContain('crew Research (9)');
    expect(text).toContain('[Overview]');
    expect(text).toContain(sample.other.at(-1)!.id);
    expect(text.split('\n').length).toBeLessThanOrEqual(23);
    expect(text.split('\n').every((line) => line.length <= 99)).toBe(true);
    // No styling requested: no escape sequences at all.
    expect(text).not.toContain('\u001B[');
  });

  it('edits an output, forks with it, shows progress and the result', async () => {
    const { frame, press, host, sample } = await openApp();
    const target = sample.main[3]!;
    // Walk down to the 4th checkpoint of Research's main branch.
    await press(keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up);
    await press('g');
    for (let step = 0; step < 30 && !frame().includes(target.id); step += 1) await press('j');
    expect(frame()).toContain(target.id);
    await press('2');
    await waitFor(() => frame().includes('[Tasks]'), 'the tasks tab');
    expect(frame()).toContain('[x] 1. Research {topic} for {audience}');
    await press(keys.enter);
    await waitFor(() => frame().includes('Edit output of task 1'), 'the editor');
    await press(keys.clear, 'A', 'B', 'C', keys.enter);
    await waitFor(() => frame().includes('*edited'), 'the edit mark');
    await press('f');
    await waitFor(() => frame().includes('Fork: new branch name'), 'the branch prompt');
    await press('x', '1', keys.enter);
    await waitFor(() => host.requests.length === 1, 'the run to start');
    expect(host.requests[0]).toMatchObject({
      mode: 'fork',
      branch: 'x1',
      taskOutputs: { 0: 'ABC' },
      checkpointId: target.id,
    });
    await waitFor(() => frame().includes('Forking'), 'the run screen');
    host.progress('task 2 started: Step 2 about AI');
    await waitFor(() => frame().includes('task 2 started'), 'a progress line');
    host.finish({ branch: 'x1', output: 'All done offline', lastCheckpoint: sample.main[0]!.id });
    await waitFor(() => frame().includes('Run finished on branch x1'), 'the result');
    expect(frame()).toContain('All done offline');
    await press(' ');
    await waitFor(() => frame().includes('[Tasks]') && !frame().includes('Forking'), 'the browser again');
    // The run's last checkpoint is selected after the list reloads.
    expect(
      frame()
        .split('\n')
        .find((line) => line.startsWith('>')),
    ).toContain('0/3 · task start');
  });

  // Review r-tui finding 2: nothing ran the app's load-plan wiring; with it removed the dialog stayed
  // on "checking" and every test passed.
  it('resumes an older checkpoint of its run: the confirmation says it goes on a new branch', async () => {
    const { frame, press, host, sample } = await openApp();
    const older = sample.main[1]!;
    await press(keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, 'g');
    for (let step = 0; step < 30 && !frame().includes(older.id); step += 1) await press('j');
    expect(frame()).toContain(older.id);
    await press('e');
    await waitFor(() => frame().includes('new branch'), 'the plan of the older checkpoint');
    expect(frame()).not.toContain('checking');
    await press('y');
    await waitFor(() => host.requests.length === 1, 'the run to start');
    expect(host.requests[0]).toMatchObject({ mode: 'resume', checkpointId: older.id });
  });

  // Task h2 #2: in a terminal of 80×14 the confirmation's last lines (the plan's warning, the keys to
  // press) were cut. The mock terminal is resized as a terminal is: new columns and rows, a resize event.
  it('keeps the confirmation keys on an 80×14 terminal and scrolls the plan with j', async () => {
    const { frame, press, app, host, sample } = await openApp();
    Object.defineProperty(app.stdout, 'columns', { value: 80, configurable: true });
    Object.defineProperty(app.stdout, 'rows', { value: 14, configurable: true });
    app.stdout.emit('resize');
    const older = sample.main[1]!;
    await press(keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, 'g');
    for (let step = 0; step < 30 && !frame().includes(older.id); step += 1) await press('j');
    await press('e');
    await waitFor(() => frame().includes('new branch'), 'the plan of the older checkpoint');
    expect(frame().split('\n').length).toBeLessThanOrEqual(13);
    expect(frame()).toContain('enter/y resume');
    expect(frame()).not.toContain('purpose, fork');
    for (let step = 0; step < 12 && !frame().includes('purpose, fork'); step += 1) await press('j');
    expect(frame()).toContain('purpose, fork');
    expect(frame()).toContain('enter/y resume');
    // Task h8 #5 (review R3): j held past the end, then k scrolls back at once. The limit was the
    // narrowest layout's: k did nothing for as many presses as j had gone past the end here.
    await press('j', 'j', 'j', 'j', 'j', 'j', 'j', 'j', 'j', 'j');
    const atEnd = frame();
    await press('k');
    expect(frame()).not.toBe(atEnd);
    await press('y');
    await waitFor(() => host.requests.length === 1, 'the run to start');
    expect(host.requests[0]).toMatchObject({ mode: 'resume', checkpointId: older.id });
  });

  // Review r-tui finding 1: a paste cut into reads, one ending on a line break, saved part of it and
  // ran the rest as keys. With bracketed paste (Ink passes ESC [200~ and ESC [201~ through), all of
  // it is text, whatever the reads are.
  it('takes a bracketed paste cut into reads as text in the editor, and drops one outside it', async () => {
    const { frame, press, host, sample, exited } = await openApp();
    const target = sample.main[3]!;
    await press(keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, keys.up, 'g');
    for (let step = 0; step < 30 && !frame().includes(target.id); step += 1) await press('j');
    await press('2', keys.enter);
    await waitFor(() => frame().includes('Edit output of task 1'), 'the editor');
    await press(keys.clear, '\u001B[200~every tide pool\r', 'eyq\r', 'last\u001B[201~', keys.enter);
    await waitFor(() => frame().includes('*edited'), 'the edit saved');
    expect(host.requests).toEqual([]);
    expect(exited()).toBe(0);
    await press(keys.escape, keys.tab, '\u001B[200~', 'every tide pool\r', 'q\u001B[201~');
    await waitFor(() => frame().includes('pasted text dropped'), 'the paste dropped');
    expect(exited()).toBe(0);
    expect(host.requests).toEqual([]);
    await press('2', keys.enter);
    await waitFor(() => frame().includes('Edit output of task 1'), 'the editor again');
    expect(frame()).toContain('every tide pool');
    expect(frame()).toContain('eyq');
  });

  it('shows help on ? and quits on q', async () => {
    const { frame, press, exited } = await openApp();
    await press('?');
    await waitFor(() => frame().includes('Press any key to close this help'), 'help');
    await press('x', 'q');
    await waitFor(() => exited() === 1, 'exit');
  });
});
