import { processSlot } from './process-slot.js';
import { redactSecretsInText } from './secret-patterns.js';
import { reportUnregisteredCredentialsTo } from './secret-registration.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LogRecord {
  level: LogLevel;
  component: string;
  message: string;
  error?: unknown;
}

/** Where log records go. Replace it with {@link setLogSink}; pass `null` to silence crewline. */
export type LogSink = (record: LogRecord) => void;

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function levelFromEnvironment(): LogLevel {
  const value = process.env.CREWLINE_LOG_LEVEL;
  return value === 'debug' || value === 'info' || value === 'warn' || value === 'error' ? value : 'warn';
}

const defaultSink: LogSink = (record) => {
  const cause =
    record.error instanceof Error
      ? `: ${record.error.message}`
      : record.error
        ? `: ${String(record.error)}`
        : '';
  process.stderr.write(`crewline ${record.level} [${record.component}] ${record.message}${cause}\n`);
};

interface LoggerSettings {
  sink: LogSink | null;
  minimumLevel: LogLevel;
}

// One setting per process: a project that silences crewline through its own copy of this package
// silences the copy the runtime logs through too.
const settings = processSlot<LoggerSettings>('crewline.logger.v1', () => ({
  sink: defaultSink,
  minimumLevel: levelFromEnvironment(),
}));

/**
 * Redirect crewline's logs (e.g. into your own logger), or silence them with `null`. Returns the sink
 * it replaces, so code that redirects logs for a while (a test) can put it back.
 */
export function setLogSink(next: LogSink | null): LogSink | null {
  const previous = settings.sink;
  settings.sink = next;
  return previous;
}

/** Lowest level that is emitted. Defaults to `CREWLINE_LOG_LEVEL` or `warn`. */
export function setLogLevel(level: LogLevel): void {
  settings.minimumLevel = level;
}

/** A copy of an error (and its cause chain) with secrets removed from messages and stacks. */
function redactError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) {
    if (error === undefined || error === null) return error;
    return redactSecretsInText(typeof error === 'string' ? error : safeString(error));
  }
  const copy = new Error(redactSecretsInText(error.message));
  copy.name = error.name;
  copy.stack = error.stack === undefined ? undefined : redactSecretsInText(error.stack);
  if (error.cause !== undefined && depth < 5) copy.cause = redactError(error.cause, depth + 1);
  return copy;
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  } catch {
    return String(value);
  }
}

function write(level: LogLevel, component: string, message: string, error?: unknown): void {
  const sink = settings.sink;
  if (sink === null || order[level] < order[settings.minimumLevel]) return;
  sink({ level, component, message: redactSecretsInText(message), error: redactError(error) });
}

/** The one logger of crewline. Messages pass through secret redaction before reaching the sink. */
export const logger = {
  debug: (component: string, message: string) => write('debug', component, message),
  info: (component: string, message: string) => write('info', component, message),
  warn: (component: string, message: string, error?: unknown) => write('warn', component, message, error),
  error: (component: string, message: string, error?: unknown) => write('error', component, message, error),
};

// Debug, not a warning: a placeholder key (`lm-studio`) is the expected configuration of a local
// server, and a dictionary password is still redacted under its name. The value is never said.
reportUnregisteredCredentialsTo((source, reason) =>
  write('debug', 'redaction', `${source} is not redacted by value: ${reason}`),
);
