import { describe, expect, it } from 'vitest';
import { formatElapsed, type ProgressEvent, ProgressView } from './progress-view.js';
import { terminalStyle } from './terminal-style.js';

class Buffer {
  text = '';
  isTTY: boolean;
  constructor(isTTY: boolean) {
    this.isTTY = isTTY;
  }
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

const research = { taskIndex: 0, taskName: 'research', agentRole: 'Researcher' };
const write = { taskIndex: 1, taskName: 'write', agentRole: 'Writer' };

/** A run of two tasks at a fake clock: each model call takes 4 s and costs 100 tokens. */
function play(view: ProgressView, clock: { now: number }): void {
  const events: [number, ProgressEvent][] = [
    [0, { type: 'task_started', context: research }],
    [0, { type: 'llm_call_started', context: research }],
    [4000, { type: 'llm_call_completed', context: research, usage: { totalTokens: 100 } }],
    [0, { type: 'task_completed', context: research }],
    [0, { type: 'task_started', context: write }],
    [0, { type: 'llm_call_started', context: write }],
    [4000, { type: 'llm_call_completed', context: write, usage: { totalTokens: 150 } }],
    [0, { type: 'task_completed', context: write }],
  ];
  for (const [advance, event] of events) {
    clock.now += advance;
    view.handle(event);
  }
}

describe('ProgressView', () => {
  it('prints one plain line per step, with task n of m, time and tokens, when not animating', () => {
    const output = new Buffer(false);
    const clock = { now: 0 };
    const view = new ProgressView({
      output,
      style: { animate: false, color: false },
      taskLabels: ['research', 'write'],
      now: () => clock.now,
    });
    play(view, clock);
    view.stop();
    expect(output.text.split('\n')).toEqual([
      '▶ Task 1 of 2: research (Researcher) started',
      '  model answered (100 tokens; 100 in total, 4.0 s elapsed)',
      '✔ Task 1 of 2: research completed in 4.0 s, 100 tokens (4.0 s elapsed, 100 tokens in total)',
      '▶ Task 2 of 2: write (Writer) started',
      '  model answered (150 tokens; 250 in total, 8.0 s elapsed)',
      '✔ Task 2 of 2: write completed in 4.0 s, 150 tokens (8.0 s elapsed, 250 tokens in total)',
      '',
    ]);
    expect(output.text).not.toContain('\u001b');
    expect(output.text).not.toContain('\r');
    expect(view.tokens).toBe(250);
    expect(view.modelCalls).toBe(2);
  });

  it('redraws a spinner status line in place when animating, and clears it when stopped', () => {
    const output = new Buffer(true);
    const clock = { now: 0 };
    const view = new ProgressView({
      output,
      style: { animate: true, color: true },
      taskLabels: ['research', 'write'],
      now: () => clock.now,
      frameMs: 60_000,
    });
    view.handle({ type: 'task_started', context: research });
    view.handle({ type: 'llm_call_started', context: research });
    clock.now = 2500;
    expect(view.statusText()).toBe(
      '⠋ Task 1 of 2: research · Researcher is waiting for the model · 2.5 s · 0 tokens',
    );
    view.line('a note');
    expect(output.text).toContain('\r\u001b[2K');
    expect(output.text).toContain('\u001b[2m⠋ Task 1 of 2');
    view.stop();
    expect(output.text.endsWith('\r\u001b[2K')).toBe(true);
    expect(view.statusText()).toBeUndefined();
  });
});

describe('terminalStyle', () => {
  it('animates and colours only an interactive terminal without NO_COLOR or TERM=dumb', () => {
    expect(terminalStyle({ write: () => true, isTTY: true }, {})).toEqual({ animate: true, color: true });
    expect(terminalStyle({ write: () => true, isTTY: false }, {})).toEqual({ animate: false, color: false });
    expect(terminalStyle({ write: () => true, isTTY: true }, { NO_COLOR: '1' })).toEqual({
      animate: false,
      color: false,
    });
    expect(terminalStyle({ write: () => true, isTTY: true }, { TERM: 'dumb' }).animate).toBe(false);
  });
});

describe('formatElapsed', () => {
  it('shows seconds, then minutes', () => {
    expect(formatElapsed(0)).toBe('0.0 s');
    expect(formatElapsed(12_345)).toBe('12.3 s');
    expect(formatElapsed(125_000)).toBe('2 min 05 s');
  });
});
