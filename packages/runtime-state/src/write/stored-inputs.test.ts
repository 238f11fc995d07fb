import { EventBus, REDACTED, registerSecretValue } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from '../provider.js';
import { RuntimeState } from '../runtime-state.js';
import { SettledValues } from '../settled-values.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';
import { createValueCodec, decodeValue, encodeValue } from '../value-codec.js';
import { StoredInputs } from './stored-inputs.js';

/** A provider that keeps every write it was given, as well as storing it. */
class KeepingProvider extends InMemoryProvider {
  readonly writes: CheckpointWrite[] = [];
  override writeSync(location: string, write: CheckpointWrite): StoredCheckpoint {
    this.writes.push(write);
    return super.writeSync(location, write);
  }
}

function run(inputs: Record<string, unknown>) {
  const provider = new KeepingProvider();
  const state = new RuntimeState({ provider, location: 'mem', inputs, bus: new EventBus() });
  return { provider, state };
}

describe('StoredInputs', () => {
  it('gives every checkpoint of a run the same stored inputs while they do not change', () => {
    const { provider, state } = run({ topic: 'AI', depth: 2, tags: ['a', 'b'], nested: { on: true } });
    state.checkpoint();
    state.checkpoint();
    state.checkpoint();
    const [first, second, third] = provider.writes.map((write) => write.document.inputs);
    expect(second).toBe(first);
    expect(third).toBe(first);
    // Settled: providers and redaction skip it by identity.
    expect(state.settled.has(first as object)).toBe(true);
    expect(decodeValue(first!)).toEqual({ topic: 'AI', depth: 2, tags: ['a', 'b'], nested: { on: true } });
  });

  it('encodes the inputs again after they changed in place, at any depth', () => {
    const inputs = { topic: 'AI', nested: { items: [1, 2] } };
    const { provider, state } = run(inputs);
    state.checkpoint();
    inputs.nested.items.push(3);
    state.checkpoint();
    inputs.topic = 'tides';
    state.checkpoint();
    (inputs as Record<string, unknown>).added = null;
    state.checkpoint();
    state.inputs = { added: null, topic: 'tides', nested: { items: [1, 2, 3] } };
    state.checkpoint();
    const stored = provider.writes.map((write) => write.document.inputs);
    expect(stored.map((value) => decodeValue(value))).toEqual([
      { topic: 'AI', nested: { items: [1, 2] } },
      { topic: 'AI', nested: { items: [1, 2, 3] } },
      { topic: 'tides', nested: { items: [1, 2, 3] } },
      { topic: 'tides', nested: { items: [1, 2, 3] }, added: null },
      { added: null, topic: 'tides', nested: { items: [1, 2, 3] } },
    ]);
    // Same content in another key order is stored in that order: a new value.
    expect(new Set(stored).size).toBe(5);
  });

  it('encodes afresh what is not plain JSON, as encodeValue does', () => {
    const shared = { label: 'x' };
    const cases: unknown[] = [
      { when: new Date(0) },
      { missing: undefined },
      { zero: -0 },
      { ratio: Number.NaN },
      { a: shared, b: shared },
      { map: new Map([['k', 1]]) },
    ];
    for (const value of cases) {
      const storedInputs = new StoredInputs();
      const settled = new SettledValues();
      const first = storedInputs.stored(value, undefined, settled);
      const second = storedInputs.stored(value, undefined, settled);
      expect(second).not.toBe(first);
      expect(second).toEqual(encodeValue(value));
      expect(decodeValue(second)).toEqual(decodeValue(encodeValue(value)));
    }
  });

  it('tells two equal-looking values apart when one shares an object and the other does not', () => {
    const storedInputs = new StoredInputs();
    const settled = new SettledValues();
    const first = storedInputs.stored({ a: { n: 1 }, b: { n: 1 } }, undefined, settled);
    const shared = { n: 1 };
    const second = storedInputs.stored({ a: shared, b: shared }, undefined, settled);
    expect(second).not.toBe(first);
    expect(second).toEqual(encodeValue({ a: shared, b: shared }));
  });

  it('encodes again with another codec, and after a secret was registered', () => {
    const storedInputs = new StoredInputs();
    const settled = new SettledValues();
    const secret = `stored-inputs-secret-${'q7'.repeat(8)}`;
    const inputs = { note: `the key is ${secret}` };
    const first = storedInputs.stored(inputs, undefined, settled);
    expect(JSON.stringify(first)).toContain(secret);
    const codec = createValueCodec();
    const withCodec = storedInputs.stored(inputs, codec, settled);
    expect(withCodec).not.toBe(first);
    expect(storedInputs.stored(inputs, codec, settled)).toBe(withCodec);
    registerSecretValue(secret);
    const redacted = storedInputs.stored(inputs, codec, settled);
    expect(JSON.stringify(redacted)).not.toContain(secret);
    expect(JSON.stringify(redacted)).toContain(REDACTED);
  });
});
