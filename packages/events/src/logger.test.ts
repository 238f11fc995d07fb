import { afterEach, describe, expect, it } from 'vitest';
import { type LogRecord, logger, setLogLevel, setLogSink } from './logger.js';

const key = `sk-proj-${'Lk9'.repeat(14)}`;

afterEach(() => {
  setLogSink(null);
  setLogLevel('warn');
});

function capture(): LogRecord[] {
  const records: LogRecord[] = [];
  setLogSink((record) => records.push(record));
  return records;
}

describe('logger', () => {
  it('redacts keys in messages, error messages, stacks, causes and non-Error values', () => {
    const records = capture();
    const error = new Error(`request failed with ${key}`, { cause: new Error(`inner ${key}`) });
    logger.warn('test', `using ${key}`, error);
    logger.warn('test', 'plain', `a string cause with ${key}`);
    logger.warn('test', 'object', { header: `Bearer ${key}` });
    const text = JSON.stringify(
      records.map((record) => ({
        message: record.message,
        error:
          record.error instanceof Error
            ? [record.error.message, record.error.stack, String((record.error.cause as Error).message)]
            : record.error,
      })),
    );
    expect(text).not.toContain(key);
    expect(records).toHaveLength(3);
    expect((records[0]!.error as Error).stack).toContain('[REDACTED]');
  });

  it('respects the level and can be silenced', () => {
    const records = capture();
    logger.info('test', 'hidden at warn');
    setLogLevel('debug');
    logger.debug('test', 'shown');
    setLogSink(null);
    logger.error('test', 'silenced');
    expect(records.map((record) => record.message)).toEqual(['shown']);
  });

  it('returns the sink it replaces, so a temporary redirect can be undone', () => {
    const outer: LogRecord[] = [];
    const outerSink = (record: LogRecord) => void outer.push(record);
    setLogSink(outerSink);
    const inner: LogRecord[] = [];
    const previous = setLogSink((record) => void inner.push(record));
    expect(previous).toBe(outerSink);
    logger.warn('test', 'inner');
    expect(setLogSink(previous)).not.toBe(outerSink);
    logger.warn('test', 'outer');
    expect(inner.map((record) => record.message)).toEqual(['inner']);
    expect(outer.map((record) => record.message)).toEqual(['outer']);
    setLogSink(null);
    expect(setLogSink(null)).toBeNull();
  });
});
