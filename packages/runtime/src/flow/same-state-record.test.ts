// sameStateRecord tells whether new inputs changed a continued flow's state of record (see
// same-inputs-key-order.test.ts for the flow's side): equal values in any key order are the same,
// and the comparison stops at the first difference instead of turning both records into text (a
// state of a megabyte, or of 100,000 keys, was sorted and written out twice per kickoff).
import { type EncodedValue, encodeValue } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { sameStateRecord } from './shared-state.js';

const record = (value: unknown): EncodedValue => encodeValue(value);

describe('sameStateRecord', () => {
  it('finds records with equal values in another key order the same, nested objects included', () => {
    const one = record({ topic: 'a', settings: { tone: 'plain', length: 1 }, tags: ['x', 'y'] });
    const other = record({ tags: ['x', 'y'], settings: { length: 1, tone: 'plain' }, topic: 'a' });
    expect(sameStateRecord(one, other)).toBe(true);
  });

  it('finds a changed value, an added or removed field and another array order different', () => {
    const base = { topic: 'a', settings: { tone: 'plain' }, tags: ['x', 'y'] };
    expect(sameStateRecord(record(base), record({ ...base, settings: { tone: 'warm' } }))).toBe(false);
    expect(sameStateRecord(record(base), record({ ...base, extra: 1 }))).toBe(false);
    expect(sameStateRecord(record({ ...base, extra: 1 }), record(base))).toBe(false);
    expect(sameStateRecord(record(base), record({ ...base, tags: ['y', 'x'] }))).toBe(false);
    expect(sameStateRecord(record({ list: [] }), record({ list: {} }))).toBe(false);
    expect(sameStateRecord(record({ count: 0 }), record({ count: null }))).toBe(false);
  });

  it('reads a field named __proto__ as a field, never the prototype', () => {
    const one = JSON.parse('{"__proto__": {"x": 1}, "a": 2}') as EncodedValue;
    const same = JSON.parse('{"a": 2, "__proto__": {"x": 1}}') as EncodedValue;
    const changed = JSON.parse('{"__proto__": {"x": 2}, "a": 2}') as EncodedValue;
    const without = JSON.parse('{"a": 2}') as EncodedValue;
    expect(sameStateRecord(one, same)).toBe(true);
    expect(sameStateRecord(one, changed)).toBe(false);
    expect(sameStateRecord(one, without)).toBe(false);
    expect(sameStateRecord(without, one)).toBe(false);
  });

  it('counts a field whose value is undefined as absent, as its stored text does', () => {
    const one = { json: { a: 1, b: undefined } } as unknown as EncodedValue;
    const other = { json: { a: 1 } } as unknown as EncodedValue;
    expect(sameStateRecord(one, other)).toBe(true);
    expect(sameStateRecord(other, one)).toBe(true);
    expect(sameStateRecord(undefined, undefined)).toBe(true);
    expect(sameStateRecord(record({}), undefined)).toBe(false);
  });

  it('stops at the first difference: the values after it are not read', () => {
    const fields = (first: number) => {
      const value: Record<string, number> = { first };
      for (let index = 0; index < 1000; index += 1) value[`field-${index}`] = index;
      return value;
    };
    let reads = 0;
    const counted = (target: Record<string, number>) =>
      new Proxy(target, {
        get(object, key, receiver) {
          reads += 1;
          return Reflect.get(object, key, receiver);
        },
      });
    const one = { json: counted(fields(1)) } as unknown as EncodedValue;
    const other = { json: counted(fields(2)) } as unknown as EncodedValue;
    expect(sameStateRecord(one, other)).toBe(false);
    expect(reads).toBeLessThanOrEqual(2);
  });
});
