import { CrewlineError, type LogRecord, logger, setLogSink } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogs } from './capture-logs.js';

afterEach(() => setLogSink(null));

describe('captureLogs', () => {
  it('keeps records from the sink while it runs and puts the previous sink back', () => {
    const outside: LogRecord[] = [];
    setLogSink((record) => void outside.push(record));
    const logs = captureLogs();
    logger.warn('runtime', 'checkpoint x is not the latest of its run');
    expect(outside).toHaveLength(0);
    expect(logs.expect('not the latest')).toHaveLength(1);
    logs.stop();
    logger.warn('runtime', 'after');
    expect(outside.map((record) => record.message)).toEqual(['after']);
    expect(logs.records).toHaveLength(1);
  });

  it('fails an expectation nothing matched, naming what was logged', () => {
    const logs = captureLogs();
    logger.warn('runtime', 'something else');
    let thrown: unknown;
    try {
      logs.expect(/not the latest/);
    } catch (error) {
      thrown = error;
    }
    expect(CrewlineError.hasCode(thrown, 'not_found')).toBe(true);
    expect((thrown as Error).message).toContain('warn [runtime] something else');
    logs.stop({ allowUnexpected: true });
  });

  it('throws at stop on a warning or error nobody expected, but not on expected ones', () => {
    const logs = captureLogs();
    logger.warn('runtime', 'expected one');
    logger.error('provider-json', 'write failed');
    logs.expect((record) => record.message === 'expected one');
    expect(logs.unexpected().map((record) => record.message)).toEqual(['write failed']);
    expect(() => logs.stop()).toThrow(/unexpected log records: error \[provider-json\] write failed/);
    const quiet = captureLogs();
    logger.warn('runtime', 'expected two');
    quiet.expect('expected two');
    expect(() => quiet.stop()).not.toThrow();
  });
});
