import { describe, expect, it } from 'vitest';
import { parseAssignments, parseCount } from './args.js';
import { parseDuration } from './duration.js';
import {
  characterCount,
  formatBytes,
  formatColumns,
  formatDelta,
  formatValue,
  oneLine,
  truncate,
} from './format.js';
import { displayPath, redactUrl } from './location.js';

describe('formatting', () => {
  it('sizes', () => {
    expect(formatBytes(undefined)).toBe('-');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MB');
  });

  it('truncates by code point and pads to a width', () => {
    expect(truncate('hello world', 8)).toBe('hello...');
    expect(truncate('short', 8)).toBe('short');
    expect(truncate('ééééé', 4)).toBe('é...');
    expect(oneLine(' a\n  b\tc ')).toBe('a b c');
  });

  it('columns and values', () => {
    expect(
      formatColumns([
        ['A', 'BB', 'C'],
        ['long', 'x', 'y'],
      ]),
    ).toEqual(['A     BB  C', 'long  x   y']);
    expect(formatValue('x')).toBe('"x"');
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
    expect(formatValue(10n)).toBe('10n');
  });

  it('time differences', () => {
    expect(formatDelta(39)).toBe('+39ms');
    expect(formatDelta(12_340)).toBe('+12.3s');
    expect(formatDelta(192_000)).toBe('+3m12s');
    expect(formatDelta(-(2 * 3600 + 5 * 60) * 1000)).toBe('-2h5m');
    expect(formatDelta(27 * 3600 * 1000)).toBe('+1d3h');
  });

  it('paths and URLs for display', () => {
    expect(displayPath('/work/project/.checkpoints', '/work/project')).toBe('./.checkpoints');
    expect(displayPath('/work/project/x.db#abc', '/work/project')).toBe('./x.db#abc');
    expect(displayPath('/elsewhere/x.db', '/work/project')).toBe('/elsewhere/x.db');
    expect(redactUrl('postgres://user:secret@host/db')).toBe('postgres://user:***@host/db');
  });
});

describe('argument parsing', () => {
  it('durations in s, m, h, d, w, combined', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    expect(parseDuration('1d12h')).toBe(36 * 3_600_000);
    for (const bad of ['', '7', 'd', '7y', '7d x', '-1d'])
      expect(() => parseDuration(bad)).toThrow(/not understood/);
  });

  it('counts', () => {
    expect(parseCount('--keep', '3')).toBe(3);
    expect(() => parseCount('--keep', '-1')).toThrow(/whole number/);
    expect(() => parseCount('--keep', 'x')).toThrow(/whole number/);
  });

  it('key=value assignments, key:=json for other types', () => {
    expect(parseAssignments('--input', undefined)).toBeUndefined();
    expect(
      parseAssignments('--input', ['topic=AI agents', 'count:=3', 'flags:={"a":true}', 'empty=']),
    ).toEqual({
      topic: 'AI agents',
      count: 3,
      flags: { a: true },
      empty: '',
    });
    expect(parseAssignments('--input', ['url=a=b'])).toEqual({ url: 'a=b' });
    expect(() => parseAssignments('--input', ['novalue'])).toThrow(/key=value/);
    expect(() => parseAssignments('--input', ['n:=nope'])).toThrow(/expects JSON/);
    expect(() => parseAssignments('--input', ['__proto__=x'])).toThrow(/no usable key/);
    const parsed = parseAssignments('--input', ['constructor=x'])!;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(parsed.constructor).toBe('x');
  });
});

describe('characterCount', () => {
  it('counts code points', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('é😀x')).toBe(3);
  });
});
