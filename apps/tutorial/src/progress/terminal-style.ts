/** Something text is written to: `process.stdout`, or a buffer in tests. */
export interface TextOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** How the output looks: colours and a redrawn status line only on an interactive terminal. */
export interface TerminalStyle {
  /** Redraw a spinner/status line in place. */
  animate: boolean;
  /** ANSI colours. */
  color: boolean;
}

/**
 * Colour and animation only on a terminal, and never with NO_COLOR (https://no-color.org) or
 * TERM=dumb: piped into a file or a CI log, the demo prints plain lines, one per event.
 */
export function terminalStyle(
  output: TextOutput,
  env: Readonly<Record<string, string | undefined>>,
): TerminalStyle {
  const interactive = output.isTTY === true && env.TERM !== 'dumb';
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const enabled = interactive && !noColor;
  return { animate: enabled, color: enabled };
}

const codes = {
  bold: [1, 22],
  dim: [2, 22],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  red: [31, 39],
};

export type Paint = Record<keyof typeof codes, (text: string) => string>;

/** Colour functions; identity functions when colour is off. */
export function paint(color: boolean): Paint {
  const entries = Object.entries(codes).map(([name, [open, close]]) => [
    name,
    color ? (text: string) => `\u001b[${open}m${text}\u001b[${close}m` : (text: string) => text,
  ]);
  return Object.fromEntries(entries) as Paint;
}
