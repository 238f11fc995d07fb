import type { BrowserState } from './browser-state.js';
import { wrapText } from './line-fitting.js';
import { type Line, plain } from './panels.js';

// The run screen: a resume or fork running in the browser, its progress, and how it ended.

/** The checkpoint id inside a reference (`db#id`, or a JSON file named after its id), else the reference. */
export function shortReference(reference: string): string {
  const hash = reference.lastIndexOf('#');
  if (hash >= 0) return reference.slice(hash + 1);
  const name = reference.split(/[\\/]/).at(-1) ?? reference;
  return /\d{8}T\d{9}-[0-9a-f]{8}/.exec(name)?.[0] ?? reference;
}

/** Rows of the run screen kept for its last progress lines while a message below takes the rest. */
const progressRowsKept = 3;

/**
 * At most `limit` lines of a message, cut in the middle: its start says what happened and its end
 * how to fix it (a run error ends with the option or command to use), so neither is the part cut.
 */
function middleCut(lines: readonly string[], limit: number): string[] {
  if (lines.length <= limit) return [...lines];
  const head = Math.max(1, Math.floor((limit - 1) / 3));
  return [...lines.slice(0, head), '…', ...lines.slice(lines.length - (limit - 1 - head))];
}

export function runScreen(state: BrowserState, width: number, height: number): Line[] {
  const run = state.run!;
  const title: Line = [
    { text: run.mode === 'resume' ? 'Resuming ' : 'Forking ', bold: true },
    { text: run.checkpointId, bold: true },
    {
      text: run.status === 'running' ? '  running...' : run.status === 'finished' ? '  finished' : '  failed',
      color: run.status === 'running' ? 'yellow' : run.status === 'finished' ? 'green' : 'red',
      bold: true,
    },
  ];
  const tail: Line[] = [];
  // What a message below the progress may take: every row but the title, a blank, a few progress
  // lines and the message's own heading and key hint (two at most). Its first 3 or 4 wrapped lines
  // only hid, at 80×24, the end of an error, where the fix is, above rows left empty.
  const messageRows = Math.max(3, height - 2 - progressRowsKept - 2);
  const pause = run.status === 'finished' ? run.result?.pause : undefined;
  if (run.result && pause) {
    tail.push([
      { text: `Paused on branch ${run.result.branch}: ${pause.methodName} waits for an answer`, bold: true },
    ]);
    tail.push(
      ...middleCut(wrapText(pause.message.replace(/\s+/g, ' ').trim(), width), messageRows).map(plain),
    );
    tail.push([
      {
        text: pause.checkpoint
          ? 'a: answer and continue   any other key: back'
          : 'no checkpoint was written for the pause; any key: back',
        color: 'gray',
      },
    ]);
  } else if (run.status === 'finished' && run.result) {
    tail.push([{ text: `Run finished on branch ${run.result.branch}`, color: 'green', bold: true }]);
    if (run.result.lastCheckpoint)
      tail.push(plain(`last checkpoint ${shortReference(run.result.lastCheckpoint)}`));
    // The start of the output (the whole of it is in the last checkpoint).
    const output = wrapText(`output: ${run.result.output.replace(/\s+/g, ' ').trim()}`, width);
    const outputRows = messageRows - (run.result.lastCheckpoint ? 1 : 0);
    tail.push(
      ...(output.length > outputRows ? [...output.slice(0, outputRows - 1), '…'] : output).map(plain),
    );
    tail.push([{ text: 'press any key to go back to the checkpoints', color: 'gray' }]);
  } else if (run.status === 'failed') {
    tail.push(
      ...middleCut(wrapText(run.error ?? 'the run failed', width), messageRows + 1).map(
        (text): Line => [{ text, color: 'red' }],
      ),
    );
    tail.push([{ text: 'press any key to go back to the checkpoints', color: 'gray' }]);
  } else {
    tail.push([{ text: 'ctrl+c interrupts the run', color: 'gray' }]);
  }
  const room = Math.max(1, height - 2 - tail.length);
  // Wrapped, not cut: a log line (the runtime's warning that a resume moves to a new branch) is
  // longer than the progress lines, which are written to fit.
  const progress = run.lines
    .slice(-room)
    .flatMap((line) => wrapText(line, width))
    .slice(-room)
    .map(plain);
  return [
    title,
    plain(''),
    ...progress,
    ...new Array(Math.max(0, room - progress.length)).fill(0).map(() => plain('')),
    ...tail,
  ];
}
