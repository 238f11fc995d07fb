import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecretsInText } from './secret-patterns.js';
import { registerSecretValue } from './secret-values.js';

/** A credential of no known shape, `length` characters long: only its value can give it away. */
function shapeless(length: number): string {
  return `zq${randomBytes(length).toString('hex')}`.slice(0, length);
}

/**
 * The characters of a base64 text that hold at least one bit of the bytes from `start` to `end` of
 * what it encodes, as [first, end): character `j` holds bits `6j` to `6j + 5`.
 */
function charactersOfBytes(start: number, end: number): [number, number] {
  return [Math.floor((8 * start) / 6), Math.ceil((8 * end) / 6)];
}

/** The characters of `secret`'s own encoding in `encoded` that `redacted` still shows, by position. */
function survivors(
  text: string,
  redacted: string,
  encodedAt: number,
  secretCharacters: [number, number],
): number[] {
  const replaced = redacted.indexOf(REDACTED);
  if (replaced < 0) return Array.from({ length: secretCharacters[1] - secretCharacters[0] }, (_, at) => at);
  // One replacement: the text before it and after it is the original's.
  const keptEnd = text.length - (redacted.length - replaced - REDACTED.length);
  const left: number[] = [];
  for (let character = secretCharacters[0]; character < secretCharacters[1]; character += 1) {
    const at = encodedAt + character;
    if (at < replaced || at >= keptEnd) left.push(character);
  }
  return left;
}

describe('base64 forms of a registered value', () => {
  // Every character that encodes a bit of the secret goes, at each of the three byte offsets and
  // whatever the bytes after it: before, the groups mixing the secret's first or last bytes with its
  // neighbours' were left, and with them up to 12 bits of each end of the secret.
  it('leaves no character that encodes a bit of the secret, at every offset and length', () => {
    const leaks: string[] = [];
    const forms: [string, string][] = [];
    for (const length of [24, 25, 26]) {
      const secret = shapeless(length);
      registerSecretValue(secret);
      for (const prefix of ['', 'u:', 'us:', 'user:']) {
        for (const suffix of ['', '!', '!?', ':tail', '\n']) {
          const encoded = Buffer.from(`${prefix}${secret}${suffix}`).toString('base64');
          const text = `payload ${encoded} end`;
          const redacted = redactSecretsInText(text);
          const secretCharacters = charactersOfBytes(prefix.length, prefix.length + length);
          const label = `length ${length}, prefix '${prefix}', suffix ${JSON.stringify(suffix)}`;
          const left = survivors(text, redacted, 'payload '.length, secretCharacters);
          if (left.length > 0) leaks.push(`${label}: ${left.length} characters left`);
          forms.push([label, redacted]);
        }
      }
    }
    expect(leaks).toEqual([]);
    for (const [label, redacted] of forms) expect(redacted, label).toBe(`payload ${REDACTED} end`);
  });

  it('replaces the whole base64 token that holds the secret, and nothing around it', () => {
    const secret = shapeless(20);
    registerSecretValue(secret);
    const encoded = Buffer.from(`user:${secret}`).toString('base64');
    expect(redactSecretsInText(`{"basic":"${encoded}","next":"kept"}`)).toBe(
      `{"basic":"${REDACTED}","next":"kept"}`,
    );
    // Padding ends a token; an `=` before one is an assignment's.
    expect(redactSecretsInText(`blob=${encoded};path=/`)).toBe(`blob=${REDACTED};path=/`);
  });

  it('also finds the URL-safe and the URL-encoded base64 forms (JWT payloads, URL parameters)', () => {
    // Bytes whose standard encoding has `+` and `/`: `~` and `?` in a row give `/` and `+`-rich groups.
    const secret = `zq~~??~~??${shapeless(14)}`;
    registerSecretValue(secret);
    for (const prefix of ['', 'u:', 'us:']) {
      const standard = Buffer.from(`${prefix}${secret}!`).toString('base64');
      const urlSafe = Buffer.from(`${prefix}${secret}!`).toString('base64url');
      expect(standard, prefix).toMatch(/[+/]/);
      expect(redactSecretsInText(`token ${urlSafe} end`), prefix).toBe(`token ${REDACTED} end`);
      // In a query, `+`, `/` and `=` are URL-encoded.
      expect(redactSecretsInText(`/x?blob=${encodeURIComponent(standard)}&y=1`), prefix).toBe(
        `/x?blob=${REDACTED}&y=1`,
      );
    }
  });
});
