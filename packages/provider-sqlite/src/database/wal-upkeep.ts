import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { DatabaseUse } from './database-use.js';
import { SCHEMA_VERSION } from './schema.js';
import { type CheckpointerOptions, WalCheckpointer } from './wal-checkpointer.js';

/**
 * The WAL bound, in pages: a committing write that finds the WAL this long checkpoints it itself,
 * and the WAL file is cut back to a little more than this length when it restarts (see
 * {@link walFilePages}). It follows the database, an eighth of
 * its pages (what the WAL adds to what a run keeps on disk while the database is open), between
 * 64 pages (256 KiB of 4 KiB pages: below it, checkpoints would come every few writes) and 1024
 * (4 MiB). A fixed 4 MiB kept a 50-task run's WAL at five times the run's final checkpoint; at
 * 32 MiB, a 500-task run that never idled kept a WAL three times its final checkpoint. At a fifth,
 * the realistic crew-50 kept 2.60x its final checkpoint while open (the target is 2.5x); an eighth
 * keeps 2.44x, at the same median write.
 */
const minimumWalPages = 64;
const maximumWalPages = 1024;
const walShareOfDatabase = 8;

/** The WAL bound for a database of `pages` pages (see {@link minimumWalPages}). */
export function walBoundPages(pages: number): number {
  return Math.min(maximumWalPages, Math.max(minimumWalPages, Math.floor(pages / walShareOfDatabase)));
}

/**
 * How long the WAL file may stay, in pages, when the WAL restarts (SQLite's `journal_size_limit`):
 * the bound plus room for the frames of the commit that crosses it (an eighth of the bound, at least
 * 16 pages). A committing write checkpoints the WAL once it has reached the bound, so the WAL file
 * ends a cycle a commit longer than the bound. Cut back to the bound itself at every restart, the
 * file grew again in the next cycle: on crew-50 one write in ten either cut or grew the WAL file,
 * each near a millisecond (the file system frees blocks and allocates them again), against 0.03 ms
 * for a commit that overwrites pages the file already has. With this room the file keeps its length
 * from one cycle to the next.
 */
export function walFilePages(boundPages: number): number {
  return boundPages + Math.max(16, Math.floor(boundPages / 8));
}

/**
 * Writes after which a checkpoint of the WAL is scheduled for when the event loop is idle: an
 * eighth of the WAL bound's pages, at least 8 and at most 50. A write adds about five pages to the
 * WAL, so the idle-time checkpoint comes before the write path would have to run one (the bound), in
 * a run that waits for its model between writes. Kept small so that the WAL restarts often and
 * writes overwrite its first pages, hot in the page cache: every page a write appends past the end
 * of the WAL costs the kernel a new page and block (on crew-50, 200 left the first writes of a new
 * database measurably slower).
 */
function writesPerIdleCheckpoint(walPages: number): number {
  return Math.min(50, Math.max(8, Math.floor(walPages / 8)));
}

/**
 * While a checkpointer thread copies the WAL back (see wal-checkpointer.ts), the share of the WAL
 * bound up to which it does: past it, the thread leaves the WAL to the writer's own checkpoint at the
 * bound, which then copies only the frames the thread had not (the last fifth and what came during
 * the thread's last pass) instead of the whole bound. The writer's checkpoint stays because only it
 * restarts the WAL in a run that writes without pause: a restart needs the whole WAL copied back
 * between two commits, which a checkpoint beside a writer that never pauses never finds. A pass of
 * the thread still under way when the WAL reaches the bound would make the writer's checkpoint give
 * up: the write waits for it instead (see {@link passWaitMs}).
 */
const threadShareOfBound = 0.8;

/**
 * The smallest WAL bound (1 MiB of 4 KiB pages: a database of 5 MiB) for which the checkpointer
 * thread is asked after every write once a run never idles (at idle turns it is asked at every
 * size). Below, the writer's own checkpoint copies back little, and a run that never idles fills
 * the last fifth of the WAL in a few writes, faster than a pass of the thread ends on a loaded
 * machine: the writer would wait for it (see {@link passWaitMs}), which cost crew-50 (a 64-page
 * bound) more than it saved. Tried again (issue 13) with every size, the thread also restarting
 * the WAL: the realistic crew-50 kept 2.53× its final checkpoint while open (2.44× without; target
 * 2.5×) and the cold 0 ms overhead run was no faster, within the noise of a loaded machine.
 */
const threadMinimumWalPages = 256;

/**
 * How long a write that leaves the WAL at its bound waits, at most, for a pass of the checkpointer
 * thread under way (one that began below {@link threadShareOfBound} of the bound): the writer's own
 * checkpoint on the next commit would give up while it lasts, and the WAL would grow past its bound
 * meanwhile. A pass lasts well under a millisecond on an idle machine; the cap only matters on a
 * machine so loaded that the thread does not get to run, where the WAL passes its bound instead.
 */
const passWaitMs = 50;

/** A row of `PRAGMA wal_checkpoint`: frames in the WAL (`log`) and copied back (`checkpointed`). */
interface WalCheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Keeps the WAL of one writable connection short without the run paying for copying it back: the
 * bound it may reach, checkpoints at idle turns of the event loop run by a checkpointer thread (in
 * this thread when none can run), the same thread after every write for runs that never leave the
 * event loop idle, and restarts of the WAL in place at idle turns. The connection counts its writes here
 * ({@link WalUpkeep.noteWrite}).
 */
export class WalUpkeep {
  readonly #db: Database.Database;
  readonly #location: string;
  /** This connection counted among the process's connections to the database (see database-use.ts). */
  readonly #use: DatabaseUse | undefined;

  constructor(db: Database.Database, location: string, use: DatabaseUse | undefined) {
    this.#db = db;
    this.#location = location;
    this.#use = use;
  }

  #writesSinceCheckpoint = 0;
  #idleCheckpoint: NodeJS.Timeout | undefined;
  /** The WAL bound in force (see {@link walBoundPages}); 0 before the first {@link boundWal}. */
  #walPages = 0;
  #pageSize = 4096;
  /** How a checkpointer thread opens this database; undefined: checkpoints stay in this thread. */
  #checkpointerOptions: CheckpointerOptions | undefined;
  /** The thread copying the WAL back, once the WAL first reached its bound (see {@link noteWrite}). */
  #checkpointer: WalCheckpointer | undefined;

  /**
   * Lets this connection hand its WAL checkpoints to a thread of their own (see wal-checkpointer.ts):
   * the idle-time ones, and all of them once a run writes faster than idle-time checkpoints keep up
   * with.
   */
  checkpointOffThread(options: CheckpointerOptions): void {
    this.#checkpointerOptions = options;
  }

  /**
   * Sets the WAL bound for the database's size now (see {@link walBoundPages}): SQLite's own
   * checkpoint on commit, the length the WAL file is cut back to when it restarts, and how far a
   * checkpointer thread copies it back (see {@link threadShareOfBound}).
   */
  boundWal(): void {
    const pages = walBoundPages(this.#db.pragma('page_count', { simple: true }) as number);
    if (pages === this.#walPages) return;
    this.#walPages = pages;
    this.#pageSize = this.#db.pragma('page_size', { simple: true }) as number;
    this.#db.pragma(`wal_autocheckpoint = ${pages}`);
    this.#checkpointer?.limitPasses(this.#passLimit());
    this.#db.pragma(`journal_size_limit = ${walFilePages(pages) * this.#pageSize}`);
  }

  /**
   * Whether the run writes without leaving the event loop idle: its WAL reached the bound, in a
   * database large enough for the thread to keep up (see {@link threadMinimumWalPages}). The thread
   * is then asked after every write, not only at idle turns.
   */
  #neverIdles = false;

  /**
   * Counts a write, and keeps the WAL short without the run paying for copying it back. Every few
   * writes (see `writesPerIdleCheckpoint`), a checkpoint is scheduled for the next idle turn of the
   * event loop (a run waiting for its model; the timer never keeps the process alive). There, a
   * checkpointer thread is asked to copy the WAL back (a shared counter and a notify: nothing
   * waits), started the first time, and this thread restarts the WAL when told the copy is done; a
   * database in memory, or a thread that cannot start or failed, checkpoints in this thread instead. A WAL that reaches its bound in a large database
   * anyway belongs to a run that does not leave the event loop idle: from then on the thread is asked
   * after every write while it is not already at it, up to {@link threadShareOfBound} of the bound,
   * and SQLite's own checkpoint at the bound copies only the rest.
   */
  noteWrite(): void {
    this.#writesSinceCheckpoint += 1;
    const checkpointer = this.#checkpointer;
    if (checkpointer !== undefined) {
      // A pass under way when the WAL reaches its bound: see passWaitMs. Idle turns too short for a
      // pass (a burst of tool calls) get here as well as a run that never idles.
      if (checkpointer.working) {
        if ((checkpointer.walFrames() ?? 0) >= this.#walPages) checkpointer.waitForPass(passWaitMs);
      } else if (this.#neverIdles) checkpointer.request();
    }
    if (this.#writesSinceCheckpoint < writesPerIdleCheckpoint(this.#walPages)) return;
    this.#writesSinceCheckpoint = 0;
    if (this.#checkpointer !== undefined && !this.#checkpointer.running) {
      this.#checkpointer.close();
      this.#checkpointer = undefined;
      this.#checkpointerOptions = undefined;
      this.#neverIdles = false;
    }
    if (
      !this.#neverIdles &&
      this.#checkpointerOptions !== undefined &&
      this.#walPages >= threadMinimumWalPages &&
      this.#walReachedBound()
    ) {
      this.#neverIdles = this.#startCheckpointer() !== undefined;
      this.#checkpointer?.limitPasses(this.#passLimit());
    }
    // Every few writes: the bound follows the database as it grows, at the cost of reading its page
    // count.
    try {
      this.boundWal();
    } catch {
      // Best effort: the bound in force still holds.
    }
    if (this.#neverIdles) {
      this.#checkpointer?.request();
      return;
    }
    if (this.#idleCheckpoint !== undefined) return;
    this.#idleCheckpoint = setTimeout(() => this.#checkpointWhileIdle(), 0);
    this.#idleCheckpoint.unref();
  }

  /** The checkpointer thread, started the first time it is needed; undefined when none can run. */
  #startCheckpointer(): WalCheckpointer | undefined {
    if (this.#checkpointer !== undefined || this.#checkpointerOptions === undefined)
      return this.#checkpointer;
    this.#checkpointer = WalCheckpointer.start(this.#location, this.#checkpointerOptions, this.#use);
    if (this.#checkpointer === undefined) this.#checkpointerOptions = undefined;
    else this.#checkpointer.onCopied(() => this.#restartCopiedWal());
    return this.#checkpointer;
  }

  /**
   * Restarts the WAL once the thread has copied all of it back after an idle-time request (see
   * {@link #restartWal}), still at an idle turn in a run waiting for its model: the commit that
   * restarts it is one sync of the WAL header, where this thread's checkpoint was two syncs, the copy
   * and that commit. Not for a run that never idles: there the writer's commit at the bound restarts
   * it, once a cycle, and a restart after every pass of the thread would add syncs to the run.
   */
  #restartCopiedWal(): void {
    if (this.#neverIdles || !this.#db.open) return;
    const index = this.#checkpointer?.walIndex();
    if (index === undefined || index.frames === 0 || index.copied !== index.frames) return;
    this.#restartWal();
  }

  /**
   * WAL frames past which the thread leaves the rest to the writer's own checkpoint: only in a run
   * that never idles (see {@link threadShareOfBound}); at an idle turn it copies back the whole WAL.
   */
  #passLimit(): number {
    return this.#neverIdles ? Math.floor(this.#walPages * threadShareOfBound) : 0;
  }

  /**
   * The idle-time checkpoint: handed to the checkpointer thread, which copies the WAL back while
   * this thread waits for the run's model (see {@link #restartCopiedWal}); in this thread only when no
   * checkpointer thread runs. Started here rather than at a write: its start (about a millisecond
   * here, tens of milliseconds of the other core) then falls in the wait too, and a run that never
   * idles starts none.
   */
  #checkpointWhileIdle(): void {
    this.#idleCheckpoint = undefined;
    try {
      if (!this.#db.open) return;
      const checkpointer = this.#startCheckpointer();
      if (checkpointer?.running === true) {
        checkpointer.request();
        return;
      }
      const [result] = this.#db.pragma('wal_checkpoint(PASSIVE)') as WalCheckpointResult[];
      if (result !== undefined && result.busy === 0 && result.log > 0 && result.checkpointed === result.log)
        this.#restartWal();
    } catch {
      // Best effort: SQLite's own auto-checkpoint still bounds the WAL.
    }
  }

  /** The transaction of {@link #restartWal}, made on first use. */
  #restartTransaction: Database.Transaction<() => void> | undefined;

  /**
   * Restarts the WAL now, while the event loop is idle, once a checkpoint (the thread's, or this
   * thread's when none runs) copied all of it back: the
   * first commit after a restart writes the WAL header again and syncs it (SQLite does so in WAL mode
   * at `synchronous = NORMAL` too), which otherwise falls on the run's next checkpoint, one write in
   * every WAL cycle, a millisecond or more each. The smallest commit that writes a page does it here
   * instead: the schema version set to the value it has, read under the write lock (a write that
   * changes no byte writes no page, and so restarts nothing). Never waits for the lock: when another
   * connection holds it, the next write restarts the WAL as before.
   */
  #restartWal(): void {
    this.#restartTransaction ??= this.#db.transaction(() => {
      if (this.#db.pragma('user_version', { simple: true }) === SCHEMA_VERSION)
        this.#db.pragma(`user_version = ${SCHEMA_VERSION}`);
    });
    const timeout = this.#db.pragma('busy_timeout', { simple: true }) as number;
    this.#db.pragma('busy_timeout = 0');
    try {
      this.#restartTransaction.immediate();
    } catch {
      // Busy, or anything else: the next write restarts the WAL itself.
    } finally {
      this.#db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  /** Whether the WAL file has reached the bound (it keeps about that length when it restarts). */
  #walReachedBound(): boolean {
    try {
      return statSync(`${this.#location}-wal`).size >= this.#walPages * this.#pageSize;
    } catch {
      return false;
    }
  }

  /** Stops the idle-time checkpoint and the checkpointer thread (before the handle closes). */
  close(): void {
    if (this.#idleCheckpoint !== undefined) clearTimeout(this.#idleCheckpoint);
    this.#idleCheckpoint = undefined;
    this.#checkpointer?.close();
    this.#checkpointer = undefined;
  }

  /**
   * Copies the WAL back into the database before a writable handle closes, without waiting for any
   * lock. Why: only the last connection's close does it on its own, and when the last one is a
   * read-only connection (another provider of this process that only read) it cannot, so the WAL
   * stayed, with every commit in it, a killed writer's leftover frames included: a copy of the `.db`
   * alone missed them. The WAL file itself stays for the connections still using it; the last
   * read-write close removes it. Best effort: a reader of another process holding an older snapshot
   * keeps the frames it needs, and a busy database is left to that last close.
   */
  copyBack(): void {
    if (!this.#db.open) return;
    const timeout = this.#db.pragma('busy_timeout', { simple: true }) as number;
    try {
      this.#db.pragma('busy_timeout = 0');
      this.#db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Best effort: see above.
    } finally {
      this.#db.pragma(`busy_timeout = ${timeout}`);
    }
  }
}
