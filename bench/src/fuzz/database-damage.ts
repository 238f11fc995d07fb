// Classes of damaged SQLite databases, made from the bytes of a real checkpoint database: what a
// crash of the disk, a bad copy, another program or a person editing the file can leave.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SCHEMA_VERSION } from '@crewline/provider-sqlite/internal';
import Database from 'better-sqlite3';
import { integerBelow, integerBetween, pick, type Random, randomBytes } from './random-tools.js';

export interface DatabaseDamage {
  name: string;
  description: string;
  /**
   * Damages a copy of the database's bytes and says what it did; `scratch` is a file path the damage
   * may use to open the database with SQLite.
   */
  damage(bytes: Buffer, random: Random, scratch: string): { bytes: Buffer; detail: string };
}

/** The page size the database header states (offset 16; 1 means 65,536). */
function pageSizeOf(bytes: Buffer): number {
  const size = bytes.readUInt16BE(16);
  return size === 1 ? 65_536 : size;
}

/** The header's user_version (offset 60): the provider's schema version. */
export function userVersionOf(bytes: Buffer): number | undefined {
  return bytes.length >= 64 ? bytes.readUInt32BE(60) : undefined;
}

const truncated: DatabaseDamage = {
  name: 'truncated',
  description: 'the file cut at a random offset (half the time at a page boundary)',
  damage(bytes, random) {
    const pageSize = pageSizeOf(bytes);
    const length =
      random() < 0.5
        ? integerBelow(random, Math.floor(bytes.length / pageSize)) * pageSize
        : integerBelow(random, bytes.length);
    return { bytes: bytes.subarray(0, length), detail: `cut at byte ${length} of ${bytes.length}` };
  },
};

const garbagePages: DatabaseDamage = {
  name: 'garbage-pages',
  description:
    '1–3 pages (or parts of them) overwritten with random bytes; page 1 after its 100-byte header now and then',
  damage(bytes, random) {
    const copy = Buffer.from(bytes);
    const pageSize = pageSizeOf(copy);
    const pages = Math.floor(copy.length / pageSize);
    const hit: string[] = [];
    for (let count = integerBetween(random, 1, 3); count > 0; count -= 1) {
      const page = random() < 0.1 ? 0 : integerBetween(random, 1, pages - 1);
      const start = page * pageSize + (page === 0 ? 100 : 0);
      const whole = random() < 0.5;
      const offset = whole ? start : start + integerBelow(random, page * pageSize + pageSize - start);
      const length = whole ? page * pageSize + pageSize - start : integerBetween(random, 1, 64);
      randomBytes(random, length).copy(copy, offset);
      hit.push(whole ? `page ${page + 1}` : `${length} bytes of page ${page + 1}`);
    }
    return { bytes: copy, detail: `garbage over ${hit.join(', ')}` };
  },
};

const bitFlips: DatabaseDamage = {
  name: 'bit-flips',
  description: '1–16 random bits flipped anywhere after the 100-byte header',
  damage(bytes, random) {
    const copy = Buffer.from(bytes);
    const offsets: number[] = [];
    for (let count = integerBetween(random, 1, 16); count > 0; count -= 1) {
      const offset = integerBetween(random, 100, copy.length - 1);
      copy[offset] = copy[offset]! ^ (1 << integerBelow(random, 8));
      offsets.push(offset);
    }
    return { bytes: copy, detail: `bits flipped at bytes ${offsets.join(', ')}` };
  },
};

const zeroedHeader: DatabaseDamage = {
  name: 'zeroed-header',
  description: 'the 100-byte header (or only its 16-byte magic, or all of page 1) zeroed',
  damage(bytes, random) {
    const copy = Buffer.from(bytes);
    const length = pick(random, [16, 100, pageSizeOf(bytes)]);
    copy.fill(0, 0, length);
    return { bytes: copy, detail: `first ${length} bytes zeroed` };
  },
};

const userVersionReset: DatabaseDamage = {
  name: 'user-version-reset',
  description: 'user_version (the schema version) set to 0, as on a database no one initialized',
  damage(bytes) {
    const copy = Buffer.from(bytes);
    copy.writeUInt32BE(0, 60);
    return { bytes: copy, detail: `user_version ${userVersionOf(bytes)} → 0` };
  },
};

const userVersionNewer: DatabaseDamage = {
  name: 'user-version-newer',
  description: `user_version set past the schema this code knows (${SCHEMA_VERSION})`,
  damage(bytes, random) {
    const copy = Buffer.from(bytes);
    const version = SCHEMA_VERSION + integerBetween(random, 1, 100);
    copy.writeUInt32BE(version, 60);
    return { bytes: copy, detail: `user_version ${userVersionOf(bytes)} → ${version}` };
  },
};

/** Edits a valid database could receive from another program or by hand, as SQL. */
function tamperings(random: Random, database: Database.Database): { sql: string; detail: string } {
  const ids = database.prepare('SELECT id FROM checkpoints ORDER BY id').pluck().all() as string[];
  const id = JSON.stringify(pick(random, ids)).replaceAll('"', "'");
  const chunk = database.prepare('SELECT max(id) FROM chunks').pluck().get() as number;
  const choices = [
    { sql: `UPDATE checkpoints SET head = 'garbage' WHERE id = ${id}`, detail: 'a head that is no chunk' },
    { sql: `DELETE FROM chunks WHERE id = ${integerBetween(random, 1, chunk)}`, detail: 'a chunk deleted' },
    {
      sql: `UPDATE chunks SET body = '{"__proto__":{"crewlineFuzzPolluted":1}}' WHERE id = ${integerBetween(random, 1, chunk)}`,
      detail: 'a chunk holding a __proto__ key',
    },
    {
      sql: "UPDATE events SET body = 'not json' WHERE key = (SELECT min(key) FROM events)",
      detail: 'an event that is not JSON',
    },
    { sql: `UPDATE checkpoints SET branch = '../../escaped' WHERE id = ${id}`, detail: 'a traversal branch' },
    {
      sql: `UPDATE checkpoints SET metadata_text = '{"constructor":{"prototype":{"crewlineFuzzPolluted":1}}}' WHERE id = ${id}`,
      detail: 'metadata with a constructor.prototype key',
    },
    {
      sql: `UPDATE checkpoints SET event_count = 1000000000 WHERE id = ${id}`,
      detail: 'an event count far past the events stored',
    },
    { sql: "DELETE FROM crewline_meta WHERE key = 'application'", detail: 'the application marker deleted' },
    {
      sql: "UPDATE crewline_meta SET value = 'another-application' WHERE key = 'application'",
      detail: "another application's marker",
    },
    { sql: 'DROP TABLE events', detail: 'the events table dropped' },
  ];
  return pick(random, choices);
}

const tamperedRows: DatabaseDamage = {
  name: 'tampered-rows',
  description:
    "a sound database with hostile rows: missing chunks, non-JSON bodies, traversal branches, `__proto__` keys, another application's marker, a dropped table",
  damage(bytes, random, scratch) {
    // Through a file, not an in-memory copy: SQLite cannot deserialize a database in WAL mode.
    writeFileSync(scratch, bytes);
    const database = new Database(scratch);
    let detail: string;
    try {
      const tampering = tamperings(random, database);
      database.exec(tampering.sql);
      detail = `${tampering.detail} (${tampering.sql})`;
    } finally {
      // The last connection to close folds the WAL back into the file.
      database.close();
    }
    const damaged = readFileSync(scratch);
    rmSync(scratch, { force: true });
    return { bytes: damaged, detail };
  },
};

export const databaseDamages: readonly DatabaseDamage[] = [
  truncated,
  garbagePages,
  bitFlips,
  zeroedHeader,
  userVersionReset,
  userVersionNewer,
  tamperedRows,
];
