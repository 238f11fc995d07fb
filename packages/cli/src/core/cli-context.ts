import type { ProviderRegistry } from '@crewline/runtime-state';

/** Something text can be written to: `process.stdout`, or a buffer in tests. */
export interface TextSink {
  write(text: string): unknown;
  /** True when this is an interactive terminal. */
  isTTY?: boolean;
  /** Terminal width in columns, when known. */
  columns?: number;
  /** Terminal height in rows, when known. */
  rows?: number;
}

/**
 * Everything a command touches outside its arguments. Passed in rather than read from `process`
 * so that commands run in tests exactly as they run from the terminal.
 */
export interface CliContext {
  /** Directory relative locations and `crewline.config.ts` are resolved against. */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: TextSink;
  stderr: TextSink;
  /** Terminal input for the TUI. Default `process.stdin`. */
  stdin?: NodeJS.ReadStream;
  /**
   * Where the provider of each location comes from. Default: crewline's built-in providers plus the
   * `providers` of the project's crewline.config.ts (see `providersOf`).
   */
  providers?: ProviderRegistry;
}

/** True when coloured output is wanted: a terminal, and `NO_COLOR` not set (https://no-color.org). */
export function colorEnabled(context: Pick<CliContext, 'env' | 'stdout'>): boolean {
  const noColor = context.env.NO_COLOR;
  if (noColor !== undefined && noColor !== '') return false;
  if (context.env.TERM === 'dumb') return false;
  return context.stdout.isTTY === true;
}
