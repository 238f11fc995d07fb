import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import fc from 'fast-check';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from './json.js';
import { MAX_NESTING_DEPTH } from './nesting-depth.js';
import { redactSecrets } from './redaction.js';
import { createValueCodec, decodeValue, encodeValue, toJsonSafe } from './value-codec.js';

describe('encodeValue / decodeValue', () => {
  // Found by a review: the annotation tree of `meta` mirrors the value's keys, so redaction replaced
  // the type of a field named like a credential, and the checkpoint could not be decoded at all.
  it('decodes a value whose annotations secret redaction replaced: the value as stored', () => {
    const encoded = encodeValue({ token: undefined, password: new Date(0), user: 'ada' });
    const redacted = redactSecrets(encoded);
    expect(JSON.stringify(redacted.meta)).toContain('[REDACTED]');
    const decoded = decodeValue<Record<string, unknown>>(redacted);
    expect(decoded.token).toBeUndefined();
    expect(decoded.password).toBe('[REDACTED]');
    expect(decoded.user).toBe('ada');
  });

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

describe('createValueCodec: registered classes', () => {
  class Money {
    constructor(
      readonly amount: number,
      readonly currency: string,
    ) {}
    format() {
      return `${this.amount.toFixed(2)} ${this.currency}`;
    }
  }
  class Invoice {
    lines: Money[] = [];
    due = new Date(7);
  }

  const roundTrip = <T>(codec: ReturnType<typeof createValueCodec>, value: T): T =>
    codec.decode<T>(JSON.parse(JSON.stringify(codec.encode(value))));

  it('restores instances of registered classes, nested and in Maps, without calling the constructor', () => {
    const codec = createValueCodec({ classes: [Money, { class: Invoice, name: 'billing.Invoice' }] });
    const invoice = new Invoice();
    invoice.lines.push(new Money(3, 'EUR'), new Money(4.5, 'USD'));
    const value = { invoice, byName: new Map([['total', new Money(7.5, 'EUR')]]), plain: { a: 1 } };
    const restored = roundTrip(codec, value);
    expect(restored.invoice).toBeInstanceOf(Invoice);
    expect(restored.invoice.due).toBeInstanceOf(Date);
    expect(restored.invoice.lines[1]).toBeInstanceOf(Money);
    expect(restored.invoice.lines[1]?.format()).toBe('4.50 USD');
    expect(restored.byName.get('total')?.format()).toBe('7.50 EUR');
    expect(Object.getPrototypeOf(restored.plain)).toBe(Object.prototype);
    expect(codec.classes.get('billing.Invoice')).toBe(Invoice);
  });

  it('warns once per unregistered class when an instance is stored, and restores a plain object', () => {
    const logs: LogRecord[] = [];
    setLogSink((record) => void logs.push(record));
    try {
      const codec = createValueCodec();
      const restored = roundTrip(codec, { a: new Money(1, 'EUR'), b: [new Money(2, 'EUR')] });
      roundTrip(codec, new Money(3, 'EUR'));
      expect(restored.a).not.toBeInstanceOf(Money);
      expect(restored.a).toEqual({ amount: 1, currency: 'EUR' });
      const warnings = logs.filter((record) => record.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.component).toBe('value-codec');
      expect(warnings[0]?.message).toContain('class Money is stored as a plain object');
      expect(warnings[0]?.message).toContain('classes: [Money]');
      logs.length = 0;
      encodeValue({ when: new Date(1), map: new Map(), error: new Error('x'), bytes: new Uint8Array(2) });
      expect(logs).toEqual([]);
    } finally {
      setLogSink(null);
    }
  });

  it('keeps registrations per codec: the process-wide superjson and other codecs never see them', () => {
    const withMoney = createValueCodec({ classes: [Money, Invoice] });
    const invoice = new Invoice();
    invoice.lines.push(new Money(1, 'EUR'));
    const value = { price: new Money(2, 'EUR'), invoice, when: new Date(3), tags: new Set(['a']) };
    const stored = JSON.parse(JSON.stringify(withMoney.encode(value)));
    const logs: LogRecord[] = [];
    setLogSink((record) => void logs.push(record));
    try {
      // Another codec reads the same text: plain objects where the classes were, the rest intact.
      const codec = createValueCodec();
      const read = codec.decode<typeof value>(stored);
      codec.decode(stored);
      expect(read.price).not.toBeInstanceOf(Money);
      expect(read.price).toEqual({ amount: 2, currency: 'EUR' });
      expect(Object.getPrototypeOf(read.invoice)).toBe(Object.prototype);
      expect(read.invoice.due).toBeInstanceOf(Date);
      expect(read.when).toEqual(new Date(3));
      expect(read.tags).toEqual(new Set(['a']));
      expect(logs.map((record) => record.message)).toEqual([
        expect.stringContaining('instance of class Money, which is not registered here'),
        expect.stringContaining('instance of class Invoice, which is not registered here'),
      ]);
      expect(decodeValue<typeof value>(stored).price).not.toBeInstanceOf(Money);
    } finally {
      setLogSink(null);
    }
    expect(superjson.parse(superjson.stringify(new Money(1, 'EUR')))).not.toBeInstanceOf(Money);
  });

  it('refuses a class entry without a class or a name, and two classes under one name', () => {
    expect(() => createValueCodec({ classes: [{} as never] })).toThrow(/classes\[0\] is not a class/);
    const Anonymous = (() => class {})();
    Object.defineProperty(Anonymous, 'name', { value: '' });
    expect(() => createValueCodec({ classes: [Anonymous] })).toThrow(/classes\[0\] has no name/);
    class Other {}
    expect(() => createValueCodec({ classes: [Money, { class: Other, name: 'Money' }] })).toThrow(
      /two classes are registered under the name "Money"/,
    );
  });
});
