// A saved text holding [REDACTED] within it read against a text given again (review RJ on ab1a349):
// RJ-3, the regular expression it was read with backtracked without end on a long text that did not
// match, and held the kickoff, the plan and the CLI's heading; RJ-5, a marker at the end of the text
// took in whatever was added after the password (another host: no change, so the task continued with
// the old address).
import { REDACTED } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { changesInputs, givesRedactedAgain } from './interrupted-tasks.js';

describe('a saved text with four markers and a long text that does not match', () => {
  it('is read at once as a change (it backtracked for minutes)', () => {
    const saved = `${Array.from({ length: 4 }, () => `postgres://a:${REDACTED}@h/app`).join(' and ')}. End.`;
    const given = `${'postgres://a:p@h/app and '.repeat(40)}done`;
    expect(changesInputs({ db: saved }, { db: given })).toBe(true);
    expect(givesRedactedAgain({ db: saved }, { db: given })).toBe(false);
    const markers = `${Array.from({ length: 4 }, () => REDACTED).join(',')};`;
    expect(changesInputs({ list: markers }, { list: ','.repeat(1000) })).toBe(true);
  });

  it('still reads each marker given again as the text saved', () => {
    const saved = `postgres://a:${REDACTED}@h/app and postgres://b:${REDACTED}@k/app. End.`;
    const given = 'postgres://a:pw1@h/app and postgres://b:pw2@k/app. End.';
    expect(changesInputs({ db: saved }, { db: given })).toBe(false);
    expect(givesRedactedAgain({ db: saved }, { db: given })).toBe(true);
    expect(changesInputs({ pair: `${REDACTED}${REDACTED}` }, { pair: 'ab' })).toBe(false);
    expect(changesInputs({ pair: `${REDACTED}${REDACTED}` }, { pair: 'a' })).toBe(true);
    expect(
      changesInputs({ query: `user=a&password=${REDACTED}&mode=x` }, { query: 'user=a&password=s3&mode=x' }),
    ).toBe(false);
  });
});

describe('a marker ending the saved text', () => {
  it('does not take in an address or text added after the password', () => {
    const saved = `postgres://admin:${REDACTED}`;
    expect(changesInputs({ db: saved }, { db: 'postgres://admin:pw' })).toBe(false);
    for (const other of [
      'postgres://admin:pw@other/app',
      'postgres://admin:pw/app',
      'postgres://admin:pw;x=1',
    ]) {
      expect(changesInputs({ db: saved }, { db: other }), other).toBe(true);
      expect(givesRedactedAgain({ db: saved }, { db: other }), other).toBe(false);
    }
    expect(changesInputs({ line: `key=${REDACTED}` }, { line: 'key=abc and more' })).toBe(true);
    expect(changesInputs({ line: `key=${REDACTED}` }, { line: 'key=abc&next=1' })).toBe(true);
  });
});
