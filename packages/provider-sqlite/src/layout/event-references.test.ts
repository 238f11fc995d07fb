import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { isDamagedData } from '@crewline/runtime-state/internal';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../database/schema.js';
import { useRecordingDatabases } from '../test-support/recording-database.js';
import { EventStrings, resolveEventReferences } from './event-references.js';

const setup = useRecordingDatabases();

/** Characters of the stored event rows, and of the event lines they stand for (`end_bytes`). */
function eventStorage(location: string): { stored: number; lines: number } {
  const db = new Database(location, { readonly: true });
  try {
    return {
      stored: db.prepare('SELECT sum(length(body)) FROM events').pluck().get() as number,
      lines: Number(db.prepare('SELECT max(end_bytes) FROM events').pluck().get()),
    };
  } finally {
    db.close();
  }
}

/** Encodes `lines` as one write of a stream would, remembering them as a committed write. */
function encodeAll(strings: EventStrings, lines: string[], streamId = 1): string[] {
  const pending = strings.begin(streamId);
  const stored = lines.map((line, index) => strings.encode(line, index, pending));
  strings.remember(pending);
  return stored;
}

const long = (seed: string) => `${seed} ${'tide and moon, '.repeat(40)}"quoted\\" end`;

describe('event references', () => {
  it('stores a long string met again as a reference, and reads every line back as written', () => {
    const answer = JSON.stringify(long('answer'));
    const lines = [
      `{"type":"llm_call_completed","response":${answer}}`,
      `{"type":"tool_usage_started","input":"short"}`,
      `{"type":"task_completed","output":${answer},"again":${answer}}`,
    ];
    const stored = encodeAll(new EventStrings(), lines);
    expect(stored[0]).toBe(lines[0]);
    expect(stored[1]).toBe(lines[1]);
    expect(stored[2]!.length).toBeLessThan(lines[2]!.length - 2 * long('answer').length + 200);
    expect(resolveEventReferences([...stored])).toEqual(lines);
  });

  it('refers to strings of earlier writes of the same stream only', () => {
    const strings = new EventStrings();
    const text = `{"output":${JSON.stringify(long('first'))}}`;
    encodeAll(strings, [text]);
    expect(encodeAll(strings, [text, text], 1)[1]).not.toBe(text);
    // Another stream (a fork, another connection's write) starts from nothing.
    expect(encodeAll(strings, [text], 2)[0]).toBe(text);
    strings.forget();
    expect(encodeAll(strings, [text], 2)[0]).toBe(text);
  });

  it('reports references it cannot resolve as damaged data', () => {
    const text = `{"output":${JSON.stringify(long('x'))}}`;
    const [first, second] = encodeAll(new EventStrings(), [text, text]);
    for (const damaged of [
      [second!],
      [first!, '~not json\n{}'],
      [first!, '~[[0,5,0,10]]\n{}'],
      [first!, '~[[0,0,0,100000]]\n{}'],
      [first!, '~[[99,0,0,1]]\n{}'],
      [first!, '~[["a"]]\n{}'],
    ]) {
      let failure: unknown;
      try {
        resolveEventReferences(damaged);
      } catch (error) {
        failure = error;
      }
      expect(isDamagedData(failure), String(damaged[1])).toBe(true);
    }
  });

  it("keeps a run's repeated answers once, and every checkpoint reads back byte for byte", async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 12, outputBytes: 2000 });
    writeGrowingCheckpointsSync(run, 36);
    expect(await provider.mismatches(location)).toEqual([]);
    const { stored, lines } = eventStorage(location);
    // Each answer is in its llm_call_completed and its task_completed event: stored once.
    expect(stored).toBeLessThan(lines - 11 * 2000);
  });

  it('reads a version 5 database as it is, and continues it after the upgrade', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6, outputBytes: 1000 });
    writeGrowingCheckpointsSync(run, 6);
    provider.close();
    // What version 5 stored: every event line whole (one stream here), no marker.
    const db = new Database(location);
    const rows = db.prepare('SELECT key, body FROM events ORDER BY key').all() as {
      key: number;
      body: string;
    }[];
    expect(rows.some((row) => row.body.startsWith('~'))).toBe(true);
    const lines = resolveEventReferences(rows.map((row) => row.body));
    const update = db.prepare('UPDATE events SET body = ? WHERE key = ?');
    for (const [index, row] of rows.entries()) update.run(lines[index], row.key);
    db.prepare("DELETE FROM crewline_meta WHERE key = 'event_references'").run();
    db.pragma('user_version = 5');
    db.close();
    expect(await provider.mismatches(location)).toEqual([]);
    expect((await provider.stats(location))?.schemaVersion).toBe(5);

    writeGrowingCheckpointsSync(run, 6);
    expect((await provider.stats(location))?.schemaVersion).toBe(SCHEMA_VERSION);
    expect(await provider.mismatches(location)).toEqual([]);
  });
});
