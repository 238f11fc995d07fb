// Rows of a database that passes SQLite's quick_check but hold what no write stores (a bit flip in
// a record, a tampered or truncated file): listing and `latest` refuse with a typed error
// naming the database, the checkpoint and the column, instead of handing the CLI a row it breaks on.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A closed database of three checkpoints; returns its file and the ids, oldest first. */
function healthyDatabase(): { location: string; ids: string[] } {
  const raw = temporaryDatabase();
  cleanups.push(() => removeTemporaryDatabase(raw));
  const writer = new SqliteProvider();
  const location = writer.resolveLocation(raw);
  const ids = writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 3 }), 3);
  writer.close();
  return { location, ids };
}

/** A copy of `location` whose row `id` is changed by `tamper` through a plain connection. */
function tamperedCopy(location: string, name: string, tamper: (db: Database.Database) => void): string {
  const copy = join(location, '..', `${name}.db`);
  copyFileSync(location, copy);
  const db = new Database(copy);
  try {
    tamper(db);
  } finally {
    db.close();
  }
  return copy;
}

/** Drops a NOT NULL constraint of `checkpoints`, as a damaged schema or record can read back NULL. */
function allowNull(db: Database.Database, column: string): void {
  db.unsafeMode(true);
  db.pragma('writable_schema = ON');
  db.prepare(
    `UPDATE sqlite_schema SET sql = replace(sql, '${column} TEXT NOT NULL', '${column} TEXT') WHERE name = 'checkpoints'`,
  ).run();
  // A new schema version makes this connection read the edited schema back.
  const version = db.pragma('schema_version', { simple: true }) as number;
  db.pragma(`schema_version = ${version + 1}`);
  db.pragma('writable_schema = OFF');
}

describe('a damaged checkpoint row', () => {
  const damages: [string, string, (db: Database.Database, id: string) => void][] = [
    [
      'branch stored as a blob',
      'branch is a blob',
      (db, id) => db.prepare('UPDATE checkpoints SET branch = ? WHERE id = ?').run(Buffer.from('main'), id),
    ],
    [
      'event_count stored as text',
      'event_count is text',
      (db, id) => db.prepare("UPDATE checkpoints SET event_count = 'many' WHERE id = ?").run(id),
    ],
    [
      'a NULL where a write stores text',
      'created_at is NULL',
      (db, id) => {
        allowNull(db, 'created_at');
        db.prepare('UPDATE checkpoints SET created_at = NULL WHERE id = ?').run(id);
      },
    ],
    [
      'entity summaries of the wrong shape',
      'entities is not a list of entity summaries',
      (db, id) =>
        db
          .prepare(`UPDATE checkpoints SET entities = '[{"kind":"crew","id":"c","name":5}]' WHERE id = ?`)
          .run(id),
    ],
    [
      'entity summaries that are not JSON',
      'entities is not JSON',
      (db, id) => db.prepare(`UPDATE checkpoints SET entities = '[{"kind' WHERE id = ?`).run(id),
    ],
  ];

  it.each(damages)(
    '(%s) is refused by list and latest, naming the database, checkpoint and column',
    async (name, problem, tamper) => {
      const { location, ids } = healthyDatabase();
      const newest = ids.at(-1)!;
      const copy = tamperedCopy(location, name.replaceAll(' ', '-'), (db) => tamper(db, newest));
      const provider = new SqliteProvider();
      try {
        const attempts: [string, () => Promise<unknown>][] = [
          ['list', () => provider.list(copy)],
          ['latest', () => provider.latest(copy)],
        ];
        for (const [operation, action] of attempts) {
          const refusal = await action().then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(CrewlineError.isInstance(refusal), `${operation}: ${String(refusal)}`).toBe(true);
          expect((refusal as CrewlineError).code, operation).toBe('corrupt_checkpoint');
          const message = (refusal as Error).message;
          expect(message, operation).toContain(copy);
          expect(message, operation).toContain(`checkpoint "${newest}"`);
          expect(message, operation).toContain(problem);
          expect(message, operation).toContain('restore the database from a backup');
        }
      } finally {
        provider.close();
      }
    },
  );

  it('whose id itself is damaged is refused without quoting it', async () => {
    const { location, ids } = healthyDatabase();
    const copy = tamperedCopy(location, 'damaged-id', (db) =>
      db.prepare('UPDATE checkpoints SET id = ? WHERE id = ?').run('\u001b[2J../x', ids.at(-1)),
    );
    const provider = new SqliteProvider();
    try {
      const refusal = await provider.list(copy).catch((error: unknown) => error);
      expect(CrewlineError.hasCode(refusal, 'corrupt_checkpoint'), String(refusal)).toBe(true);
      expect((refusal as Error).message).toContain('a checkpoint row is not what crewline writes');
      expect((refusal as Error).message).not.toContain('\u001b');
    } finally {
      provider.close();
    }
  });

  it('leaves sound rows listed as written', async () => {
    const { location, ids } = healthyDatabase();
    const provider = new SqliteProvider();
    try {
      const listed = await provider.list(location);
      expect(listed.map((entry) => entry.id)).toEqual(ids);
      expect(listed[0]).toMatchObject({ branch: 'main', parentId: null, reference: `${location}#${ids[0]}` });
      expect((await provider.latest(location))?.id).toBe(ids.at(-1));
    } finally {
      provider.close();
    }
  });
});
