import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';

/** A log record is matched by a substring of its message, a pattern, or a predicate. */
export type LogMatcher = string | RegExp | ((record: LogRecord) => boolean);

export interface LogCapture {
  /** Every record logged since the capture started, in order. */
  readonly records: readonly LogRecord[];
  /**
   * Marks the records that match as expected and returns them; throws when none has been logged,
   * so a test that expects a warning fails when the warning goes away.
   */
  expect(match: LogMatcher): LogRecord[];
  /** The warnings and errors that no {@link LogCapture.expect} call matched. */
  unexpected(): LogRecord[];
  /**
   * Puts back the sink that was there before, then throws when a warning or error was logged that no
   * `expect` matched — unless `allowUnexpected` is true.
   */
  stop(options?: { allowUnexpected?: boolean }): void;
}

const component = 'testing';

function matches(record: LogRecord, match: LogMatcher): boolean {
  if (typeof match === 'string') return record.message.includes(match);
  if (match instanceof RegExp) return match.test(record.message);
  return match(record);
}

function describeRecord(record: LogRecord): string {
  return `${record.level} [${record.component}] ${record.message}`;
}

/**
 * Captures crewline's log records (instead of printing them) until `stop()`: a test asserts on the
 * warnings it provokes on purpose, and fails on the ones it did not expect.
 *
 * ```ts
 * const logs = captureLogs();
 * await restored.kickoff();
 * logs.expect('is not the latest of its run');
 * logs.stop(); // throws if anything else was logged at warn or error
 * ```
 */
export function captureLogs(): LogCapture {
  const records: LogRecord[] = [];
  const expected = new Set<LogRecord>();
  const previous = setLogSink((record) => void records.push(record));
  let stopped = false;
  const unexpected = () =>
    records.filter(
      (record) => (record.level === 'warn' || record.level === 'error') && !expected.has(record),
    );
  return {
    records,
    expect(match) {
      const found = records.filter((record) => matches(record, match));
      if (found.length === 0)
        throw new CrewlineError(
          component,
          'not_found',
          `no log record matches ${String(match)}; logged: ${
            records.length === 0 ? 'nothing' : records.map(describeRecord).join(' | ')
          }`,
        );
      for (const record of found) expected.add(record);
      return found;
    },
    unexpected,
    stop(options = {}) {
      if (!stopped) setLogSink(previous);
      stopped = true;
      const left = unexpected();
      if (left.length > 0 && options.allowUnexpected !== true)
        throw new CrewlineError(
          component,
          'invalid_state',
          `unexpected log records: ${left.map(describeRecord).join(' | ')}; expect them with logs.expect(...) or fix their cause`,
        );
    },
  };
}
