// The listings of a location's directories that the prune of one run and the claim of a lineage keep
// between calls, each directory listed again only when it changed. When a listing is trusted, and
// why, is in lineage-prune.ts's module comment; split from lineage-prune.ts, whose LineagePruneView
// reads through it.
import { type BigIntStats, type Dirent, lstatSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { errorCode } from '../errors.js';
import { classifyEntries, type FoundCheckpoint, listFailed } from './directory-walk.js';

/**
 * A directory listing is trusted only when the directory had last changed this long before the file
 * system's time at the start of the prune that listed it.
 */
const settledDirectoryNs = 3_000_000_000n;
/** Locations whose listings are kept (the most recently pruned ones). */
const keptLocations = 4;

/** One directory of a location as last listed. */
export interface ListedDirectory {
  /** Its identity and times when it was listed: `ino:mtime:ctime`, in nanoseconds. */
  stamp: string;
  /**
   * False when it changed shortly before it was listed, or when the file system's time then is
   * unknown (see lineage-prune.ts's module comment): list it again.
   */
  settled: boolean;
  subdirectories: string[];
  links: string[];
  /** The checkpoint files, by name. */
  files: Map<string, FoundCheckpoint>;
  byId: Map<string, FoundCheckpoint[]>;
  byParent: Map<string, FoundCheckpoint[]>;
  /** Heads read, by file name: the listing entry of a run this provider wrote, or the run's id. */
  heads: Map<string, StoredCheckpoint | string>;
}

function push(map: Map<string, FoundCheckpoint[]>, key: string, found: FoundCheckpoint): void {
  const list = map.get(key);
  if (list) list.push(found);
  else map.set(key, [found]);
}

function stampOf(stats: BigIntStats): string {
  return `${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

export function fileName(found: FoundCheckpoint): string {
  return basename(found.path);
}

/** When a directory last changed: the later of its mtime (which can be set back) and its ctime (which cannot). */
function changedAtNs(stats: BigIntStats): bigint {
  // biome-ignore lint/complexity/useMathMinMax: Math.max takes no bigint.
  return stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs;
}

/**
 * The listings of the {@link keptLocations} most recently listed locations: each directory's names,
 * its checkpoint files by id and by parent, and the heads read of them (kept here, filled by the
 * reader of the heads).
 */
export class DirectoryListings {
  /** Per location (least recently listed first): its directories, by path. */
  readonly #listings = new Map<string, Map<string, ListedDirectory>>();

  /** Forgets every listing. */
  forget(): void {
    this.#listings.clear();
  }

  /**
   * Every directory of the location (the location first), listed again only where it changed since
   * it was last listed (see lineage-prune.ts's module comment), or every one with `everyDirectory` (a
   * claim: what a listing knew of a name still there is kept all the same). A missing location has
   * none. `clock`: a directory that changed just before (the run's branch directory for a prune,
   * which follows a write there; the lock directory for a claim), whose ctime gives the file system's
   * time (see lineage-prune.ts's module comment).
   */
  async list(
    root: string,
    clock: string,
    options: { everyDirectory?: boolean } = {},
  ): Promise<Map<string, ListedDirectory>> {
    // Read before any directory is listed: a time the file system had reached by then. None (no
    // such directory yet, or unreadable) trusts no listing.
    let fileSystemNowNs: bigint | undefined;
    try {
      fileSystemNowNs = lstatSync(clock, { bigint: true }).ctimeNs;
    } catch {
      fileSystemNowNs = undefined;
    }
    const previous = this.#listings.get(root) ?? new Map<string, ListedDirectory>();
    // Most recently pruned last: the first one is dropped when too many are kept.
    this.#listings.delete(root);
    this.#listings.set(root, previous);
    if (this.#listings.size > keptLocations) this.#listings.delete(this.#listings.keys().next().value!);
    const current = new Map<string, ListedDirectory>();
    const visit = async (directory: string, segments: string[]): Promise<void> => {
      let stats: BigIntStats;
      try {
        // The location itself may be a link (it is the directory the user chose); nothing inside it.
        stats =
          segments.length === 0
            ? statSync(directory, { bigint: true })
            : lstatSync(directory, { bigint: true });
      } catch (error) {
        if (errorCode(error) === 'ENOENT' || (errorCode(error) === 'ENOTDIR' && segments.length > 0)) return;
        throw listFailed(directory, error);
      }
      if (!stats.isDirectory()) return;
      const stamp = stampOf(stats);
      let listed = previous.get(directory);
      if (
        options.everyDirectory === true ||
        listed === undefined ||
        !listed.settled ||
        listed.stamp !== stamp
      ) {
        const settled =
          fileSystemNowNs !== undefined && changedAtNs(stats) < fileSystemNowNs - settledDirectoryNs;
        const fresh = await this.#read(directory, segments, stamp, settled, listed);
        if (fresh === undefined) return;
        listed = fresh;
      }
      current.set(directory, listed);
      for (const name of listed.subdirectories) await visit(join(directory, name), [...segments, name]);
    };
    await visit(root, []);
    this.#listings.set(root, current);
    return current;
  }

  /**
   * Lists one directory; undefined when it is gone. What its last listing (`previous`) knew of a
   * name still there is kept: a name stands for one checkpoint (its id), so its head does not
   * change, and a branch listed at each prune (the run's own, maybe beside thousands of files of
   * other runs) costs little more than the listing itself.
   */
  async #read(
    directory: string,
    segments: string[],
    stamp: string,
    settled: boolean,
    previous: ListedDirectory | undefined,
  ): Promise<ListedDirectory | undefined> {
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || (errorCode(error) === 'ENOTDIR' && segments.length > 0))
        return undefined;
      throw listFailed(directory, error);
    }
    const files = new Map<string, FoundCheckpoint>();
    const unknown: Dirent[] = [];
    for (const entry of entries) {
      const known = entry.isFile() ? previous?.files.get(entry.name) : undefined;
      if (known === undefined) unknown.push(entry);
      else files.set(entry.name, known);
    }
    const { result, subdirectories } = classifyEntries(directory, segments, unknown);
    for (const found of result.checkpoints) files.set(fileName(found), found);
    const listed: ListedDirectory = {
      stamp,
      settled,
      subdirectories,
      links: result.links,
      files,
      byId: new Map(),
      byParent: new Map(),
      heads: previous?.heads ?? new Map(),
    };
    for (const found of files.values()) {
      push(listed.byId, found.id, found);
      if (found.parentId !== null) push(listed.byParent, found.parentId, found);
    }
    // Heads of names gone are dropped once they outnumber the files, not at each listing.
    if (listed.heads.size > 2 * files.size + 16)
      for (const name of listed.heads.keys()) if (!files.has(name)) listed.heads.delete(name);
    return listed;
  }
}
