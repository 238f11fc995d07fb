import { CrewlineError } from '@crewline/events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from './json.js';
import { MAX_NESTING_DEPTH } from './nesting-depth.js';
import { decodeValue, encodeValue, toJsonSafe } from './value-codec.js';

describe('encodeValue / decodeValue', () => {
  it('round-trips dates, maps, sets, bigints and undefined', () => {
    const value = {
      when: new Date(5),
      map: new Map([['a', 1]]),
      set: new Set([1, 2]),
      big: 10n,
      nothing: undefined,
      nested: [{ x: 1 }],
    };
    const decoded = decodeValue<typeof value>(JSON.parse(JSON.stringify(encodeValue(value))));
    expect(decoded).toEqual(value);
    expect(decoded.when).toBeInstanceOf(Date);
  });

  it('keeps keys named __proto__, constructor and prototype without touching any prototype', () => {
    const value = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": 1, "prototype": "p", "~constructor": 2}',
    );
    const stored = JSON.stringify(encodeValue(value));
    const decoded = decodeValue<Record<string, unknown>>(JSON.parse(stored));
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(decoded).sort()).toEqual(
      ['__proto__', 'constructor', 'prototype', '~constructor'].sort(),
    );
    expect(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value).toEqual({ polluted: true });
    expect(decoded['~constructor']).toBe(2);
  });

  it('round-trips any JSON value, whatever its keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(decodeValue(JSON.parse(JSON.stringify(encodeValue(value))))).toEqual(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips objects whose keys are the dangerous ones', () => {
    const key = fc.constantFrom('__proto__', 'constructor', 'prototype', '~__proto__', '~~prototype', 'a');
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.oneof(fc.string(), fc.integer(), fc.date({ noInvalidDate: true }))),
        (value) => {
          const decoded = decodeValue<Record<string, unknown>>(
            JSON.parse(JSON.stringify(encodeValue(value))),
          );
          expect(Object.keys(decoded).sort()).toEqual(Object.keys(value).sort());
          for (const name of Object.keys(value)) {
            expect(Object.getOwnPropertyDescriptor(decoded, name)?.value).toEqual(
              Object.getOwnPropertyDescriptor(value, name)?.value,
            );
          }
          expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses stored references that chain a shallow value into one deeper than MAX_NESTING_DEPTH', () => {
    // Each link is one level deep as stored; superjson's referentialEqualities hang a(i+1) under a(i).
    const links = 20000;
    const json: Record<string, JsonValue> = {};
    const references: Record<string, JsonValue> = {};
    for (let index = 0; index < links; index += 1) json[`a${index}`] = {};
    for (let index = 1; index < links; index += 1) references[`a${index}`] = [`a${index - 1}.next`];
    let refusal: unknown;
    try {
      decodeValue({ json, meta: { referentialEqualities: references } });
    } catch (error) {
      refusal = error;
    }
    expect(CrewlineError.isInstance(refusal), String(refusal)).toBe(true);
    expect((refusal as CrewlineError).code).toBe('corrupt_checkpoint');
    expect((refusal as Error).message).toContain(`more than ${MAX_NESTING_DEPTH} levels deep`);
    // Shared and cyclic values as encodeValue writes them still round-trip.
    const shared = { name: 'shared' };
    const cyclic: Record<string, unknown> = { left: shared, right: shared };
    cyclic.self = cyclic;
    const decoded = decodeValue<typeof cyclic>(JSON.parse(JSON.stringify(encodeValue(cyclic))));
    expect(decoded.left).toBe(decoded.right);
    expect(decoded.self).toBe(decoded);
  });

  it('drops functions and symbols instead of failing', () => {
    expect(decodeValue(encodeValue({ run: () => 1, tag: Symbol('x'), ok: true }))).toEqual({ ok: true });
  });
});

describe('toJsonSafe', () => {
  it('turns anything into plain JSON', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    expect(
      toJsonSafe({
        when: new Date(0),
        big: 1n,
        map: new Map([['k', 1]]),
        set: new Set(['x']),
        error: new TypeError('bad'),
        fn: () => 1,
        nan: Number.NaN,
        cyclic,
      }),
    ).toEqual({
      when: '1970-01-01T00:00:00.000Z',
      big: '1',
      map: { k: 1 },
      set: ['x'],
      error: { name: 'TypeError', message: 'bad' },
      nan: 'NaN',
      cyclic: { name: 'a', self: '[Circular]' },
    });
  });

  it('uses toJSON and escapes dangerous keys', () => {
    const value = { toJSON: () => ({ constructor: 1 }) };
    expect(toJsonSafe(value)).toEqual({ '~constructor': 1 });
  });
});
