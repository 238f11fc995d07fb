import type { StoredCheckpoint } from '@crewline/runtime-state';
import { mapLimited } from '../map-limited.js';
import { branchDirectory, locationExists, symlinkError } from '../paths.js';
import { DirectoryListings, fileName, type ListedDirectory } from '../read/directory-listings.js';
import { compareFound, type FoundCheckpoint } from '../read/directory-walk.js';
import type { LocationReader } from '../read/location-reader.js';
import { sweepTempFilesOnce } from '../write/temp-sweep.js';
import { unreadableFork } from './unreadable-forks.js';

// What the prune of one run (`maxCheckpoints`: `{ keep, lineageId }` after each of its writes) reads.
// Listing the whole location for it — every branch directory and the head of every file — made each
// write of a run with retention cost O(all checkpoints of the location): with 5,000 checkpoints of
// other runs beside it, each write's prune read 5,000 files. planPrune needs only the run's own
// checkpoints, those of other runs naming one of them as parent (forks of it: fork points are
// kept) and those it names in other runs (the fork it started from); see its documentation.
//
// - The run's checkpoints are on its branch (a run never leaves its branch; this provider remembers
//   the branch each run wrote to). That directory is listed at each prune, and the head of each of
//   its files read once: a head never changes (a file appears whole under a name carrying its id),
//   so it is kept, by name, for as long as the name is listed.
// - A fork of one of them can be anywhere in the location, written by any process, at any time:
//   a file whose name names it as parent. The other directories are not listed again while they do
//   not change: each is checked with one `lstat`, and listed again only when its identity or times
//   changed (a name created, removed or renamed in it changes its mtime and ctime). A listing read
//   while the directory had changed recently is not trusted next time: a file system stores times
//   with a coarse clock (4 ms on ext4 and xfs before Linux 6.13, a second on ext2 and ext3), so a
//   name added in the same tick would not change them. "Changed" is the later of its mtime and its
//   ctime: the mtime alone can be set back (a restore, `touch -d`, `cp -a`, rsync, tar) and then
//   says the directory is old while a name added in the tick of its last change leaves its stamp
//   as it was; the ctime cannot be set by anyone. "Recently" is measured on the file system's clock,
//   not this process's (an NFS or SMB server's clock may lag; a test suite may fake `Date`): the
//   ctime of the run's own branch directory, read before anything is listed, is a time the file
//   system had reached by then (the prune follows a write there, so it is the write's time). Only
//   the heads of files linked to the run are read.
// - A file linked to the run that cannot be read (larger than `maxCheckpointBytes`, damaged) still
//   names its parent in its name: it is counted as a fork of that parent (see unreadableFork), so
//   its fork point is kept although its run is unknown.
//
// A checkpoint of the run stored on another branch (only by hand or by another tool) is not counted
// among the run's newest, and a file elsewhere naming one of its checkpoints is taken for what its
// head says: the prune then keeps more than the whole listing would, never less.
//
// The same listings answer the claim of a lineage that may already have checkpoints anywhere in the
// location (a @persist() state's name-based lineage, claimed as new: see {@link LineagePruneView.newestOf}).
// Such a claim found none by reading the head of every file, and a flow kicking off a nested
// persisted state claims that state's lineage at each kickoff, whose saves go to the outer run's
// lineage: 200 kickoffs read the location 200 times (7.5 s where they took 0.6 s). The run of each
// file read is kept by its name, so each file's head is read once while the listings are kept. A
// claim lists every directory again, changed or not: a checkpoint of the lineage it misses is a
// state run twice and paid twice, and the stamps that let a prune skip a directory can be stale
// where the location is shared (an NFS client answers `lstat` from its attribute cache for up to a
// minute while `opendir` revalidates; a FUSE bucket mount may never move a directory's times).
// Listing costs little beside reading heads: 3,000 files in 101 directories, about 5 ms a claim
// (0.75 ms trusting the stamps; 270-420 ms reading every head, as each claim did before). The
// prune of a run still trusts the stamps as above.
//
// What a provider keeps for this, per location (the most recently used ones: directory-listings.ts's
// keptLocations, freed by `close()`): each directory's listing and each file's run id, about 540
// bytes a file (3,000 files: 1.6 MB; 100,000: about 54 MB).

/** Runs whose branch is remembered per location (the most recently written ones). */
const keptRunsPerLocation = 1_000;
/** Files whose heads are read at once (keeps file handles bounded). */
const readConcurrency = 16;
/** What {@link LineagePruneView.#head} gives for a file that cannot be read. */
const unreadable = Symbol('unreadable');

/**
 * The checkpoints the prune of one run reads (see the module comment), and what it remembers between
 * prunes: the branch each run wrote to, the listings of a location's directories and the heads of
 * the files on the branches of runs it pruned (the run of any other file a claim read: see
 * {@link newestOf}).
 */
export class LineagePruneView {
  readonly #reader: LocationReader;
  /** Per location: the branch each run wrote to; `null` for a run written to several. */
  readonly #branches = new Map<string, Map<string, string | null>>();
  /** The listings of the most recently pruned locations. */
  readonly #listings = new DirectoryListings();

  constructor(reader: LocationReader) {
    this.#reader = reader;
  }

  /** Remembers the run and branch of a checkpoint this provider stored in `root`. */
  noteWritten(root: string, { lineageId, branch }: { lineageId: string; branch: string }): void {
    let runs = this.#branches.get(root);
    if (runs === undefined) {
      runs = new Map();
      this.#branches.set(root, runs);
    }
    const known = runs.get(lineageId);
    runs.delete(lineageId);
    runs.set(lineageId, known === undefined || known === branch ? branch : null);
    if (runs.size > keptRunsPerLocation) runs.delete(runs.keys().next().value!);
  }

  /** The one branch this provider wrote `lineageId` to in `root`; undefined when none or several. */
  branchOf(root: string, lineageId: string): string | undefined {
    return this.#branches.get(root)?.get(lineageId) ?? undefined;
  }

  /** Forgets every listing (the remembered branches stay: they are a few ids). */
  forgetListings(): void {
    this.#listings.forget();
  }

  /**
   * The checkpoints of `lineageId` on `branch` and those linked to them across the location (forks
   * of them, the checkpoints they were forked from): what `planPrune` needs to prune that run on
   * that branch exactly as it would from a listing of the whole location. Unreadable files are left
   * out, as a listing leaves them out. Throws `symlinkError` for a link where a branch or checkpoint
   * could be, as a listing does.
   */
  async candidates(root: string, lineageId: string, branch: string): Promise<StoredCheckpoint[]> {
    const home = branchDirectory(root, branch);
    const listings = await this.#listings.list(root, home);
    const directories = [...listings.values()];
    const link = directories.flatMap((directory) => directory.links).sort()[0];
    if (link !== undefined) throw symlinkError(root, link);
    const own = listings.get(home);
    if (own === undefined) return [];
    // Known heads first, without an await each: main holds the files of every other run too.
    const members: StoredCheckpoint[] = [];
    const unknown: FoundCheckpoint[] = [];
    for (const [name, found] of own.files) {
      const known = own.heads.get(name);
      if (known === undefined || known === lineageId) unknown.push(found);
      else if (typeof known === 'object' && known.lineageId === lineageId) members.push(known);
    }
    for (const stored of await mapLimited(unknown, readConcurrency, (found) =>
      this.#head(root, own, found, lineageId),
    ))
      if (typeof stored === 'object' && stored.lineageId === lineageId) members.push(stored);
    const memberIds = new Set(members.map((member) => member.id));
    const linked = new Map<string, { listed: ListedDirectory; found: FoundCheckpoint }>();
    for (const member of members) {
      for (const listed of directories) {
        for (const child of listed.byParent.get(member.id) ?? [])
          if (!(listed === own && memberIds.has(child.id))) linked.set(child.path, { listed, found: child });
        if (member.parentId === null || memberIds.has(member.parentId)) continue;
        for (const parent of listed.byId.get(member.parentId) ?? [])
          linked.set(parent.path, { listed, found: parent });
      }
    }
    const others = await mapLimited([...linked.values()], readConcurrency, async ({ listed, found }) => {
      const stored = await this.#head(root, listed, found, lineageId, true);
      // A fork that cannot be read still keeps the parent its name gives (see unreadableFork).
      return stored === unreadable ? unreadableFork(found) : stored;
    });
    return [...members, ...others.filter((stored): stored is StoredCheckpoint => typeof stored === 'object')];
  }

  /**
   * The newest checkpoint of `lineageId` anywhere in the location, `null` when it has none: what
   * `LocationReader.newestOf` answers (the claim of a lineage as new asks here; that one still
   * answers `headOf` when a claimed checkpoint is not the lineage's, reading every head: keep the two
   * answers alike), from the runs kept here by file name (see the module comment). Every directory
   * is listed again, changed or not (see the module comment: its stamp may be stale). Files are
   * taken newest first; of those whose run is known by name, none is read; the others are read
   * {@link readConcurrency} at a time, newest first, only while they are newer than the newest known
   * one of the lineage, and their run is kept. Unreadable files are skipped (and read again next
   * time), as `latest` skips them; a link where a branch or checkpoint could be throws
   * `symlinkError`, as a listing does. `clock`: a directory that changed just before this call (the
   * claim's lock directory), whose ctime is the file system's time, kept with the listings for the
   * prunes that follow (see {@link DirectoryListings.list}).
   */
  async newestOf(root: string, lineageId: string, clock: string): Promise<string | null> {
    const standalone = await this.#reader.standalone(root, { lineageId });
    if (standalone !== undefined) return standalone[0]?.id ?? null;
    if (!(await locationExists(root))) return null;
    await sweepTempFilesOnce(root);
    const directories = [...(await this.#listings.list(root, clock, { everyDirectory: true })).values()];
    const link = directories.flatMap((directory) => directory.links).sort()[0];
    if (link !== undefined) throw symlinkError(root, link);
    let newestKnown: FoundCheckpoint | undefined;
    const unknown: { listed: ListedDirectory; found: FoundCheckpoint }[] = [];
    for (const listed of directories) {
      for (const [name, found] of listed.files) {
        const known = listed.heads.get(name);
        if (known === undefined) unknown.push({ listed, found });
        else if (
          (typeof known === 'object' ? known.lineageId : known) === lineageId &&
          (newestKnown === undefined || compareFound(found, newestKnown) > 0)
        )
          newestKnown = found;
      }
    }
    const newer = unknown
      .filter(({ found }) => newestKnown === undefined || compareFound(found, newestKnown) > 0)
      .sort((a, b) => compareFound(b.found, a.found));
    for (let start = 0; start < newer.length; start += readConcurrency) {
      const batch = newer.slice(start, start + readConcurrency);
      const heads = await Promise.all(
        batch.map(({ listed, found }) => this.#head(root, listed, found, lineageId)),
      );
      const index = heads.findIndex((head) => typeof head === 'object' && head.lineageId === lineageId);
      if (index >= 0) return batch[index]!.found.id;
    }
    return newestKnown?.id ?? null;
  }

  /**
   * Of `removing` (ids a prune of `lineageId` on `branch` is about to remove), those that a file
   * not among `known` (the ids the plan was made from) now names as parent: forks written since the
   * listing the plan was made from, whose fork points stay. Lists again what changed since (see
   * {@link candidates}); reads no file.
   */
  async forkedSince(
    root: string,
    branch: string,
    removing: readonly string[],
    known: ReadonlySet<string>,
  ): Promise<Set<string>> {
    const forked = new Set<string>();
    for (const listed of (await this.#listings.list(root, branchDirectory(root, branch))).values())
      for (const id of removing)
        if ((listed.byParent.get(id) ?? []).some((child) => !known.has(child.id))) forked.add(id);
    return forked;
  }

  /**
   * The head of a listed file: its listing entry when it belongs to `lineageId` (or `whole` asks for
   * it), else the id of its run; {@link unreadable} when it cannot be read (logged once, not
   * remembered: it is read again next time), undefined when it is gone.
   */
  async #head(
    root: string,
    listed: ListedDirectory,
    found: FoundCheckpoint,
    lineageId: string,
    whole = false,
  ): Promise<StoredCheckpoint | string | typeof unreadable | undefined> {
    const name = fileName(found);
    const known = listed.heads.get(name);
    if (typeof known === 'object' || (known !== undefined && known !== lineageId && !whole)) return known;
    const examined = await this.#reader.examine(found);
    if (examined === undefined) return undefined;
    if ('unreadable' in examined) {
      this.#reader.reportUnreadable(examined.unreadable.reference, examined.unreadable.reason);
      return unreadable;
    }
    const { stored } = examined;
    // The entry is kept for the runs pruned here (this provider wrote them) and the files linked to
    // them (a few); of the others, only their run.
    const kept =
      whole || stored.lineageId === lineageId || this.branchOf(root, stored.lineageId) !== undefined;
    listed.heads.set(name, kept ? stored : stored.lineageId);
    return stored;
  }
}
