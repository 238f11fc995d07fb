// Databases crafted so that a read would build more than any checkpoint holds: event references that
// copy every earlier line again and again, and chunk trees whose chunks refer to one chunk many times
// over (or to themselves). Reading them gives a typed error naming the database and the checkpoint,
// found before the text or the tree grows past the read's limit.
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { readDocument } from '@crewline/runtime-state';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A closed database of a few checkpoints, its newest changed by `tamper`; returns its file and that id. */
function tamperedDatabase(tamper: (db: Database.Database, id: string) => void): {
  location: string;
  id: string;
} {
  const raw = temporaryDatabase();
  cleanups.push(() => removeTemporaryDatabase(raw));
  const writer = new SqliteProvider();
  const location = writer.resolveLocation(raw);
  const ids = writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 3 }), 3);
  writer.close();
  const id = ids.at(-1)!;
  const db = new Database(location);
  try {
    tamper(db, id);
  } finally {
    db.close();
  }
  return { location, id };
}

/** Both reads of `id` refuse with a typed `code` error naming the database and the checkpoint. */
async function expectRefused(location: string, id: string, codes: string[]): Promise<void> {
  const provider = new SqliteProvider();
  try {
    for (const read of [
      () => provider.read(location, id),
      () => provider.readParsed(location, id, { maxBytes: 64 * 1024 * 1024 }),
    ]) {
      const error = await read().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(CrewlineError.isInstance(error), String(error)).toBe(true);
      const typed = error as CrewlineError;
      expect(codes).toContain(typed.code);
      expect(typed.message).toContain(id);
      expect(typed.message).toContain(location);
    }
  } finally {
    provider.close();
  }
}

/** Replaces the events of checkpoint `id` by `count` lines `line(index)`, in a stream of their own. */
function replaceEvents(
  db: Database.Database,
  id: string,
  count: number,
  line: (index: number) => string,
): void {
  const streamId = Number(
    db.prepare('INSERT INTO streams (parent_id, base, base_bytes) VALUES (NULL, 0, 0)').run().lastInsertRowid,
  );
  const insert = db.prepare('INSERT INTO events (key, body, end_bytes) VALUES (?, ?, ?)');
  for (let index = 0; index < count; index += 1) {
    insert.run(BigInt(streamId) * 4_294_967_296n + BigInt(index), line(index), 0);
  }
  db.prepare('UPDATE checkpoints SET stream_id = ?, event_count = ? WHERE id = ?').run(streamId, count, id);
}

describe('hostile event references', () => {
  it('lines that copy every earlier line four times over are damaged data, not a string too long', async () => {
    const first = `{"type":"x","text":"${'a'.repeat(1000)}"}`;
    const lengths: number[] = [];
    const { location, id } = tamperedDatabase((db, checkpoint) => {
      // Twenty lines: were they resolved, the last would pass V8's longest string many times over.
      replaceEvents(db, checkpoint, 20, (index) => {
        if (index === 0) {
          lengths.push(first.length);
          return first;
        }
        const previous = lengths[index - 1]!;
        lengths.push(previous * 4);
        const reference = [0, index - 1, 0, previous];
        return `~${JSON.stringify([reference, reference, reference, reference])}\n`;
      });
    });
    await expectRefused(location, id, ['corrupt_checkpoint']);
  });

  it('references that stay within the stored size still read back', async () => {
    // Sound checkpoints of a run that repeats long strings hold references (event-references.test.ts);
    // here, the plain fixture reads back unchanged under the bound.
    const { location, id } = tamperedDatabase(() => {});
    const provider = new SqliteProvider();
    try {
      const raw = await provider.read(location, id);
      const text = 'text' in raw ? raw.text : '';
      const { document, eventLines } = await provider.readParsed(location, id, {
        maxBytes: 64 * 1024 * 1024,
      });
      const events = (eventLines ?? []).map((line) => JSON.parse(line) as unknown);
      expect(JSON.parse(text)).toEqual({ ...(document as object), events });
    } finally {
      provider.close();
    }
  });
});

describe('damaged event lines', () => {
  it('leave the rest of the checkpoint readable, and reading its events is a typed error naming it', async () => {
    const { location, id } = tamperedDatabase((db, checkpoint) => {
      const line = '{"type":"task_started","eventId":"e","sequence":1,"timestamp":"t"}';
      replaceEvents(db, checkpoint, 3, (index) => (index === 1 ? '{"type":' : line));
    });
    const provider = new SqliteProvider();
    try {
      // A restore reads the entities, never the events it does not need (they are parsed when read).
      const document = await readDocument(provider, location, id);
      expect(document.metadata.id).toBe(id);
      expect(document.entities.length).toBeGreaterThan(0);
      const refusal = (() => {
        try {
          return document.events;
        } catch (error) {
          return error;
        }
      })();
      expect(CrewlineError.isInstance(refusal), String(refusal)).toBe(true);
      expect((refusal as CrewlineError).code).toBe('corrupt_checkpoint');
      expect((refusal as Error).message).toContain(`${location}#${id}`);
      expect((refusal as Error).message).toContain('an event line is not valid JSON');
    } finally {
      provider.close();
    }
  });
});

describe('hostile chunk trees', () => {
  /** Points checkpoint `id`'s head at a new root chunk `n{"state":<top>}` whose tree `build` inserts. */
  function replaceTree(
    db: Database.Database,
    id: string,
    build: (insert: (body: string) => number) => number,
  ) {
    const insert = (body: string) =>
      Number(db.prepare('INSERT INTO chunks (body) VALUES (?)').run(body).lastInsertRowid);
    const top = build(insert);
    const root = insert(`n{"state":${top}}`);
    db.prepare('UPDATE checkpoints SET head = ? WHERE id = ?').run(String(root), id);
  }

  it('chunks that refer to one chunk four times, thirty levels deep, stop at the limit', async () => {
    const { location, id } = tamperedDatabase((db, checkpoint) =>
      replaceTree(db, checkpoint, (insert) => {
        let chunk = insert(`v"${'b'.repeat(100)}"`);
        for (let level = 0; level < 30; level += 1) chunk = insert(`n[${chunk},${chunk},${chunk},${chunk}]`);
        return chunk;
      }),
    );
    await expectRefused(location, id, ['too_large', 'corrupt_checkpoint']);
  });

  it('a chunk that refers to itself is damaged data', async () => {
    const { location, id } = tamperedDatabase((db, checkpoint) =>
      replaceTree(db, checkpoint, (insert) => {
        const chunk = insert('n[]');
        db.prepare('UPDATE chunks SET body = ? WHERE id = ?').run(`n[${chunk}]`, chunk);
        return chunk;
      }),
    );
    await expectRefused(location, id, ['corrupt_checkpoint']);
  });

  it('a cycle that refers to itself twice over is damaged data', async () => {
    const { location, id } = tamperedDatabase((db, checkpoint) =>
      replaceTree(db, checkpoint, (insert) => {
        const a = insert('n[]');
        const b = insert(`n[${a},${a}]`);
        db.prepare('UPDATE chunks SET body = ? WHERE id = ?').run(`n[${b},${b}]`, a);
        return b;
      }),
    );
    await expectRefused(location, id, ['corrupt_checkpoint']);
  });
});
