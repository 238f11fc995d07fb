import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addRedaction } from './add-redaction.js';
import { INERT_TEXT_MAXIMUM_LENGTH, isInertText } from './inert-text.js';
import { redactionRegistry } from './redaction-registry.js';
import { isSecretKey } from './secret-names.js';
import { REDACTED, redactSecretsInText, scanText } from './secret-patterns.js';
import { registerSecretValue } from './secret-registration.js';

const inertAlphabet = '0123456789abcdefABCDEFTZ-.:+';

/** A deterministic pseudo-random sequence, so that a failure names a text that can be found again. */
function randomInertTexts(count: number): string[] {
  let seed = 7;
  const next = (limit: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % limit;
  };
  return Array.from({ length: count }, () => {
    const length = 8 + next(INERT_TEXT_MAXIMUM_LENGTH - 7);
    let text = '';
    for (let index = 0; index < length; index += 1) text += inertAlphabet[next(inertAlphabet.length)];
    return text;
  });
}

describe('inert text', () => {
  it('is what ids, digests and timestamps are made of, and nothing with other letters', () => {
    for (const text of [
      randomUUID(),
      randomBytes(20).toString('hex'),
      new Date().toISOString(),
      '2026-11-27T06:01:45+02:00',
      '10.2.3-0dbf',
    ])
      expect(isInertText(text), text).toBe(true);
    for (const text of [
      'sequential',
      'offline_call_d421b40ff008_0',
      'crew-step-1',
      `${randomUUID()} `,
      'abcdef\u00e9',
      '0'.repeat(INERT_TEXT_MAXIMUM_LENGTH + 1),
    ])
      expect(isInertText(text), text).toBe(false);
  });

  it('cannot hold a match of any built-in rule: the whole scan leaves such texts as they are', () => {
    expect(redactionRegistry().values.size, 'no registered value in this test file').toBe(0);
    for (const text of [
      ...randomInertTexts(3000),
      'dead:beef0123456789',
      'face=0123456789abcdef',
      'a:b:c:d:e:f:0123456789',
      'AAAA-BBBB-CCCC-DDDD-EEEE-FFFF',
    ])
      expect(scanText(text), text).toBe(text);
  });

  it('cannot make a credential name, so no assignment in it is read as one', () => {
    // Every name of up to five letters that an inert text can spell (lower-cased by the name rule).
    const letters = 'abcdeftz';
    let names = [''];
    for (let length = 1; length <= 5; length += 1) {
      names = names.flatMap((name) => [...letters].map((letter) => name + letter));
      for (const name of names) expect(isSecretKey(name), name).toBe(false);
    }
  });

  it('still loses a registered credential value that is itself inert', () => {
    expect(redactionRegistry().patterns, 'no user pattern in this test file yet').toHaveLength(0);
    expect(redactionRegistry().names.size, 'no user name in this test file yet').toBe(0);
    const hexKey = randomBytes(16).toString('hex');
    const uuidKey = randomUUID();
    registerSecretValue(hexKey);
    registerSecretValue(uuidKey);
    expect(redactSecretsInText(hexKey)).toBe(REDACTED);
    expect(redactSecretsInText(`${uuidKey}`)).toBe(REDACTED);
    expect(redactSecretsInText(`0000-${hexKey}-ffff`)).toBe(`0000-${REDACTED}-ffff`);
  });

  it('takes the whole scan once a user pattern is registered: it may match ids', () => {
    const id = randomUUID();
    expect(redactSecretsInText(`${id}`)).toBe(id);
    const registry = redactionRegistry();
    addRedaction({ patterns: [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g] });
    try {
      expect(redactSecretsInText(`${id}`)).toBe(REDACTED);
    } finally {
      // Taken away again, so that the next test meets no user pattern.
      registry.patterns.pop();
      registry.generation += 1;
    }
  });

  it('takes the whole scan once a user name is registered: any letters can make one', () => {
    const text = 'fee:0123456789abcdef';
    expect(redactSecretsInText(text)).toBe(text);
    addRedaction({ names: ['fee'] });
    expect(redactSecretsInText(text)).toBe(`fee:${REDACTED}`);
  });
});
