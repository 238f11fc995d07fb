import { readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { DatabaseUse } from './database-use.js';

/** Slots of the array the writer and the checkpointer share. */
const REQUESTS = 0;
const STOP = 1;
const CLOSED = 2;
const PASSES = 3;
/** 1 while a checkpoint pass runs. */
const WORKING = 4;
/** WAL frames past which the thread leaves the rest to the writer's own checkpoint; 0: no limit. */
const PASS_LIMIT = 5;
const STATE_SLOTS = 6;
/** Frames not yet copied back below which a pass is not worth its two syncs. */
const minimumPassFrames = 16;

/** How the checkpointer opens the database: as the writer's connection does. */
export interface CheckpointerOptions {
  busyTimeoutMs: number;
  synchronous: 'normal' | 'full';
}

/**
 * Passes a request runs at most while the writer commits during them: each copies back what the
 * writer added during the one before, fewer frames each time, until the whole WAL is copied back and
 * can restart. A writer that never pauses is never caught up with; its WAL restarts at the bound.
 */
const catchUpPasses = 3;

/**
 * The checkpointer's thread, as source: a script of its own (not a module file) so that it runs the
 * same from `src` (tests, benches) and from `dist`, without the loaders of the parent's `execArgv`.
 * It opens its own connection to the database and, when the writer asks, copies the WAL back with a
 * passive checkpoint, which never takes the write lock: the writer goes on committing meanwhile. It
 * skips a pass that would copy few frames, and stops at the limit the writer sets (see
 * `threadShareOfBound` in wal-upkeep.ts). Once the whole WAL is copied back it tells the writer
 * (a `copied` message), which restarts the WAL (see `WalUpkeep`): not the thread, whose commit
 * would be another connection's to the writer (`PRAGMA data_version`), dropping what the writer
 * remembers between writes (`Connection.lastWrite`). Every error of its connection is the thread's
 * own: it closes, and the writer checkpoints in its own thread again.
 */
const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const state = new Int32Array(workerData.state);
const { readSync } = require('node:fs');
const header = Buffer.alloc(100);
// SQLite writes the wal-index in the machine's byte order.
const readCount = require('node:os').endianness() === 'LE' ? 'readUInt32LE' : 'readUInt32BE';
const shm = workerData.shm;
// The WAL's length and how much of it is copied back, from the wal-index header in the -shm file
// (mxFrame at byte 16, nBackfill at byte 96: https://sqlite.org/walformat.html): a pass runs only
// while the WAL is shorter than the share of its bound the writer leaves to its own checkpoint.
function worthAPass() {
  if (shm === undefined) return true;
  try {
    if (readSync(shm, header, 0, 100, 0) < 100) return true;
  } catch {
    return true;
  }
  const frames = header[readCount](16);
  const copied = header[readCount](96);
  const limit = Atomics.load(state, ${PASS_LIMIT});
  return frames - copied >= ${minimumPassFrames} && (limit === 0 || frames < limit);
}
// Frames in the WAL not yet copied back; -1 when the wal-index header cannot be read.
function framesLeft() {
  if (shm === undefined) return -1;
  try {
    if (readSync(shm, header, 0, 100, 0) < 100) return -1;
  } catch {
    return -1;
  }
  return header[readCount](16) - header[readCount](96);
}
let db;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.location, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
  db.pragma('synchronous = ' + workerData.synchronous);
  let handled = 0;
  while (Atomics.load(state, ${STOP}) === 0) {
    Atomics.wait(state, ${REQUESTS}, handled);
    handled = Atomics.load(state, ${REQUESTS});
    if (Atomics.load(state, ${STOP}) !== 0) break;
    if (!worthAPass()) continue;
    Atomics.store(state, ${WORKING}, 1);
    let left = -1;
    try {
      for (let pass = 0; pass < ${catchUpPasses}; pass += 1) {
        db.pragma('wal_checkpoint(PASSIVE)');
        Atomics.add(state, ${PASSES}, 1);
        left = framesLeft();
        if (left <= 0 || Atomics.load(state, ${STOP}) !== 0) break;
      }
    } finally {
      Atomics.store(state, ${WORKING}, 0);
      Atomics.notify(state, ${WORKING});
    }
    if (left === 0 && Atomics.load(state, ${STOP}) === 0) parentPort.postMessage('copied');
  }
} catch {
  // The writer sees CLOSED without having asked for it and checkpoints in its own thread again.
} finally {
  try {
    if (db !== undefined) db.close();
  } catch {}
  Atomics.store(state, ${CLOSED}, 1);
  Atomics.notify(state, ${CLOSED});
}
`;

/** How long closing waits for the checkpointer's connection to close before it gives up on it. */
const closeWaitMs = 2000;

/**
 * A thread with its own connection to a database that copies its WAL back into the database when the
 * writer asks (see `WalUpkeep.noteWrite`), so that a run whose event loop never idles (no idle-time
 * checkpoint) does not pay the WAL checkpoints inside its writes. Never blocks the writer: a request
 * is a shared counter bumped and a notify. The thread never keeps the process alive.
 */
export class WalCheckpointer {
  readonly #worker: Worker;
  readonly #state: Int32Array;
  readonly #shm: number | undefined;
  readonly #index = Buffer.alloc(100);
  /** The thread's own connection to the database, counted until it is closed (see database-use.ts). */
  readonly #threadUse: DatabaseUse | undefined;
  #failed = false;
  #closed = false;

  private constructor(
    worker: Worker,
    state: Int32Array,
    shm: number | undefined,
    threadUse: DatabaseUse | undefined,
  ) {
    this.#worker = worker;
    this.#state = state;
    this.#shm = shm;
    this.#threadUse = threadUse;
    worker.on('error', () => {
      this.#failed = true;
    });
    // A thread that ended without closing its connection (terminated while a pass ran past the wait of
    // close) holds no lock any more once it has exited: only then may the -shm descriptor close.
    worker.on('exit', () => threadUse?.release());
    worker.on('message', (message) => {
      if (message === 'copied') this.#onCopied?.();
    });
    // After the listener: adding a 'message' listener refs the worker's port again.
    worker.unref();
  }

  /**
   * Starts a checkpointer for the database at `location`; undefined when no thread can be started.
   * `use`: the writer's connection to it, which keeps the -shm descriptor the wal-index header is
   * read from (see database-use.ts); the thread's connection is counted beside it.
   */
  static start(
    location: string,
    options: CheckpointerOptions,
    use: DatabaseUse | undefined,
  ): WalCheckpointer | undefined {
    const threadUse = use?.another();
    try {
      const shm = use?.shmDescriptor(location);
      const state = new Int32Array(new SharedArrayBuffer(STATE_SLOTS * Int32Array.BYTES_PER_ELEMENT));
      const worker = new Worker(checkpointerSource, {
        eval: true,
        execArgv: [],
        workerData: {
          state: state.buffer,
          driver: createRequire(import.meta.url).resolve('better-sqlite3'),
          location,
          shm,
          busyTimeoutMs: options.busyTimeoutMs,
          synchronous: options.synchronous === 'full' ? 'FULL' : 'NORMAL',
        },
      });
      return new WalCheckpointer(worker, state, shm, threadUse);
    } catch {
      threadUse?.release();
      return undefined;
    }
  }

  /** False once the thread has stopped without being asked (its connection failed): checkpoint in-thread again. */
  get running(): boolean {
    return !this.#failed && Atomics.load(this.#state, CLOSED) === 0;
  }

  /** Checkpoint passes the thread has run, for tests. */
  get passes(): number {
    return Atomics.load(this.#state, PASSES);
  }

  /** Whether a checkpoint pass runs now. */
  get working(): boolean {
    return Atomics.load(this.#state, WORKING) === 1;
  }

  /** Frames in the WAL now (see {@link walIndex}); undefined when the header cannot be read. */
  walFrames(): number | undefined {
    return this.walIndex()?.frames;
  }

  /**
   * Waits until the thread's pass under way ends, for at most `timeoutMs`: the writer's own
   * checkpoint, which a pass under way makes give up, is due.
   */
  waitForPass(timeoutMs: number): void {
    Atomics.wait(this.#state, WORKING, 1, timeoutMs);
  }

  /**
   * Calls `listener` (in this thread, as an event) each time a request ended with the whole WAL
   * copied back: the moment to restart it.
   */
  onCopied(listener: () => void): void {
    this.#onCopied = listener;
  }

  #onCopied: (() => void) | undefined;

  /**
   * The WAL's frames and how many of them are copied back, from the wal-index header (mxFrame at
   * byte 16, nBackfill at byte 96); undefined when it cannot be read.
   */
  walIndex(): { frames: number; copied: number } | undefined {
    // Closed: the descriptor may be closed too, and its number another file's.
    if (this.#shm === undefined || this.#closed) return undefined;
    try {
      if (readSync(this.#shm, this.#index, 0, 100, 0) < 100) return undefined;
    } catch {
      return undefined;
    }
    const little = endianness() === 'LE';
    return {
      frames: little ? this.#index.readUInt32LE(16) : this.#index.readUInt32BE(16),
      copied: little ? this.#index.readUInt32LE(96) : this.#index.readUInt32BE(96),
    };
  }

  /** Sets the WAL frames past which the thread leaves the rest to the writer's own checkpoint. */
  limitPasses(frames: number): void {
    Atomics.store(this.#state, PASS_LIMIT, frames);
  }

  /** Asks for a checkpoint of the WAL as soon as the thread is free; requests while it works are coalesced. */
  request(): void {
    Atomics.add(this.#state, REQUESTS, 1);
    Atomics.notify(this.#state, REQUESTS);
  }

  /**
   * Stops the thread and waits (a checkpoint pass at most) until its connection is closed, so that
   * the writer's own close, the last connection of this process, copies the WAL back and removes it.
   */
  close(): void {
    this.#closed = true;
    Atomics.store(this.#state, STOP, 1);
    this.request();
    if (!this.#failed) Atomics.wait(this.#state, CLOSED, 0, closeWaitMs);
    // Its connection is closed: counted closed now, so that the writer's close, the last, closes the
    // -shm descriptor too. Otherwise the thread's exit does (see the constructor).
    if (Atomics.load(this.#state, CLOSED) === 1) this.#threadUse?.release();
    void this.#worker.terminate();
  }
}
