import { closeSync, lstatSync, openSync, readSync } from 'node:fs';
import { readFlags } from '../read/checkpoint-file.js';
import { bucketLimitBytes, bucketPath, type IdIndexEntry, parseEntry, removedMark } from './id-index.js';

/** What a view holds of one bucket: its lines up to `size` bytes, the last one of each id. */
interface BucketView {
  inode: number;
  size: number;
  /** The text after `<id> ` of each id's last line (a `<branch>/<file name>`, or the removed mark). */
  lines: Map<string, string>;
}

/**
 * Buckets kept in memory at once: a run writes into the bucket of the current second, so the few
 * latest are all a writer asks about.
 */
const bucketsKept = 4;

/**
 * The id index's buckets as this process last read them (see id-index.ts), for a write to ask
 * whether its id is already stored without scanning the location. A bucket is only appended to, so
 * each question costs one `lstat` of the id's bucket, and a read of what was appended since the
 * last question, if anything: usually the lines of the checkpoints written just before. A bucket
 * replaced (another inode) or shorter than read (edited by hand) is read again from its start.
 *
 * What it answers is what the index says: an entry lost in a crash, or not written yet by another
 * process, is not seen (see IdIndexKeeper.entryOf for this process's own entries).
 */
export class IdIndexView {
  /** By bucket path, least recently asked first. */
  readonly #buckets = new Map<string, BucketView>();

  /**
   * The entry the index holds for `id` in `root`, or undefined when it holds none (no line, a
   * removed one, a damaged one, or a bucket that cannot be read).
   */
  entryOf(root: string, id: string): IdIndexEntry | undefined {
    return entryIn(this.#linesOf(bucketPath(root, id)), id);
  }

  /**
   * {@link entryOf} for several ids at one moment (a group about to be written): each bucket they
   * fall in is asked once, usually one for the whole group. Undefined at the index of an id the
   * index holds no entry for.
   */
  entriesOf(root: string, ids: readonly string[]): (IdIndexEntry | undefined)[] {
    const lines = new Map<string, Map<string, string> | undefined>();
    return ids.map((id) => {
      const path = bucketPath(root, id);
      if (!lines.has(path)) lines.set(path, this.#linesOf(path));
      return entryIn(lines.get(path), id);
    });
  }

  /** The lines of the bucket at `path` as it is now, or undefined when it cannot be used. */
  #linesOf(path: string): Map<string, string> | undefined {
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      info = undefined;
    }
    if (info === undefined || !info.isFile() || info.size > bucketLimitBytes) {
      this.#buckets.delete(path);
      return undefined;
    }
    let view = this.#buckets.get(path);
    if (view === undefined || view.inode !== info.ino || view.size > info.size)
      view = { inode: info.ino, size: 0, lines: new Map() };
    if (view.size < info.size && !readAppended(path, view, info.size)) {
      this.#buckets.delete(path);
      return undefined;
    }
    this.#buckets.delete(path);
    this.#buckets.set(path, view);
    if (this.#buckets.size > bucketsKept) this.#buckets.delete(this.#buckets.keys().next().value!);
    return view.lines;
  }
}

/** The entry of `id` in the `lines` of its bucket, if they hold a usable one. */
function entryIn(lines: Map<string, string> | undefined, id: string): IdIndexEntry | undefined {
  const line = lines?.get(id);
  return line === undefined || line === removedMark ? undefined : parseEntry(id, line);
}

/**
 * Reads the bucket at `path` from `view.size` to `size` (opened without following a link) and adds
 * its complete lines to `view`; a last line still being appended is read next time. False when it
 * cannot be read.
 */
function readAppended(path: string, view: BucketView, size: number): boolean {
  const buffer = Buffer.allocUnsafe(size - view.size);
  let length = 0;
  try {
    const descriptor = openSync(path, readFlags);
    try {
      while (length < buffer.length) {
        const read = readSync(descriptor, buffer, length, buffer.length - length, view.size + length);
        if (read === 0) break;
        length += read;
      }
    } finally {
      closeSync(descriptor);
    }
  } catch {
    return false;
  }
  const end = buffer.subarray(0, length).lastIndexOf(10) + 1;
  if (end === 0) return true;
  for (const line of buffer.toString('utf8', 0, end - 1).split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) view.lines.set(line.slice(0, space), line.slice(space + 1));
  }
  view.size += end;
  return true;
}
