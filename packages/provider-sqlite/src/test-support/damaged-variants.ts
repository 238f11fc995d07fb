import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

/** One damaged copy of a database file. */
export interface DamagedVariant {
  name: string;
  bytes: Buffer;
}

/** What {@link damagedVariants} needs to know about the healthy database it damages. */
export interface DatabaseImage {
  bytes: Buffer;
  pageSize: number;
  /** Page numbers (1-based) of the `checkpoints` table's b-tree: its root, then one of its leaves. */
  checkpointsRoot: number;
  checkpointsLeaf: number;
}

/**
 * Checkpoints the WAL into the database file (so that the file alone holds every page, as after a
 * clean close) and returns the file's bytes and where the `checkpoints` table's b-tree lives. Every
 * connection that wrote to `location` must be closed first.
 */
export function databaseImage(location: string): DatabaseImage {
  const db = new Database(location);
  let pageSize: number;
  let checkpointsRoot: number;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    pageSize = db.pragma('page_size', { simple: true }) as number;
    checkpointsRoot = db
      .prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'checkpoints'")
      .pluck()
      .get() as number;
  } finally {
    db.close();
  }
  const bytes = readFileSync(location);
  // An interior b-tree page (type 2 or 5) keeps its right-most child's page number at offset 8.
  const rootStart = (checkpointsRoot - 1) * pageSize;
  const rootType = bytes[rootStart]!;
  if (rootType !== 2 && rootType !== 5) {
    throw new Error('the checkpoints table fits one page; write more checkpoints to damage a leaf too');
  }
  return { bytes, pageSize, checkpointsRoot, checkpointsLeaf: bytes.readUInt32BE(rootStart + 8) };
}

/** Deterministic bytes that are not a valid page (a fixed pseudo-random sequence). */
function garbage(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let index = 0; index < length; index += 1) {
    state = (state * 1103515245 + 12345) % 2147483648;
    bytes[index] = state >> 16;
  }
  return bytes;
}

/**
 * Damaged copies of a database: the ways a disk, a partial copy or a stray write damage a file.
 * Truncated at several offsets (inside the header, after the first page, in the middle, without its
 * last page), pages overwritten with garbage (the first, the second, a quarter in, the middle, the
 * last) or zeroed (three quarters in), the header zeroed, and the `checkpoints` table's b-tree damaged (its root's page type, a leaf's cell
 * pointers). Plus two files that were never a database: random bytes, and a bare SQLite header.
 */
export function damagedVariants(image: DatabaseImage): DamagedVariant[] {
  const { bytes, pageSize } = image;
  const pages = bytes.length / pageSize;
  const middle = Math.floor(pages / 2);
  const quarter = Math.floor(pages / 4);
  const truncated = (name: string, length: number) => ({
    name,
    bytes: Buffer.from(bytes.subarray(0, length)),
  });
  const overwritten = (name: string, offset: number, replacement: Buffer) => {
    const copy = Buffer.from(bytes);
    replacement.copy(copy, offset);
    return { name, bytes: copy };
  };
  const pageStart = (page: number) => (page - 1) * pageSize;
  const rootStart = pageStart(image.checkpointsRoot);
  const leafStart = pageStart(image.checkpointsLeaf);
  return [
    truncated('truncated inside the header', 50),
    truncated('truncated after the header', 100),
    truncated('truncated after the first page', pageSize),
    truncated('truncated in the middle of a page', middle * pageSize + 123),
    truncated('truncated to half its pages', middle * pageSize),
    truncated('without its last page', bytes.length - pageSize),
    overwritten('first page overwritten with garbage', 0, garbage(pageSize, 1)),
    overwritten('second page overwritten with garbage', pageStart(2), garbage(pageSize, 2)),
    overwritten('page at a quarter overwritten with garbage', pageStart(quarter), garbage(pageSize, 7)),
    overwritten('middle page overwritten with garbage', pageStart(middle), garbage(pageSize, 3)),
    overwritten('page at three quarters zeroed', pageStart(middle + quarter), Buffer.alloc(pageSize)),
    overwritten('last page overwritten with garbage', pageStart(pages), garbage(pageSize, 4)),
    overwritten('header zeroed', 0, Buffer.alloc(100)),
    overwritten('checkpoints root with a wrong page type', rootStart, Buffer.from([0x55])),
    overwritten('checkpoints leaf with garbage cell pointers', leafStart + 8, garbage(64, 5)),
    { name: 'random bytes', bytes: garbage(3 * pageSize, 6) },
    { name: 'a bare SQLite header', bytes: Buffer.from('SQLite format 3\u0000', 'latin1') },
  ];
}

/**
 * What SQLite's own `PRAGMA quick_check` says of a database file: `'ok'`, or the first problem it
 * reported (as a row, or as the error it threw). Opened through a copy the caller provides.
 */
export function quickCheckOf(location: string): string {
  try {
    const db = new Database(location, { fileMustExist: true });
    try {
      const rows = db.pragma('quick_check') as { quick_check: string }[];
      return rows.map((row) => row.quick_check).join('\n');
    } finally {
      db.close();
    }
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
}
