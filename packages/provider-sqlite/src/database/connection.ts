import type { CrewlineError } from '@crewline/events';
import { HeadCache } from '@crewline/runtime-state/internal';
import type Database from 'better-sqlite3';
import { EventStrings } from '../layout/event-references.js';
import { DatabaseUse } from './database-use.js';
import {
  type KnownLease,
  type LeaseStatements,
  prepareLeaseStatements,
  prepareStatements,
  type Statements,
} from './statements.js';
import type { CheckpointerOptions } from './wal-checkpointer.js';
import { WalUpkeep } from './wal-upkeep.js';

/** Where this connection's last write left its checkpoint and that checkpoint's event stream. */
export interface LastWrite {
  id: string;
  streamId: number;
  eventCount: number;
  /** Events in the stream (counting inherited ones) and their byte total, right after the write. */
  streamLength: number;
  streamBytes: number;
  /** `PRAGMA data_version` when it was written: unchanged means no other connection wrote since. */
  dataVersion: number;
  /** The entity summaries it kept in a chunk (see `ENTITIES_CHUNK_BYTES`), and that chunk's id. */
  entities?: { text: string; chunk: number };
}

/** One open database: the better-sqlite3 handle, its prepared statements and its head cache. */
export class Connection {
  readonly db: Database.Database;
  readonly location: string;
  readonly statements: Statements;
  /** Head trees of the checkpoints this connection wrote recently. */
  readonly heads = new HeadCache();
  /**
   * Value chunks (`v…`) the recent writes of this connection stored, by body: a value met again at
   * another place of a later head (a task's answer, first a message of its conversation, then its
   * output) is named by the same chunk instead of stored twice. Only used by a write that continues
   * the last one while no other connection committed (its chunks are then all still there), emptied
   * otherwise and by this connection's garbage collection.
   */
  readonly recentValues = new Map<string, number>();
  /**
   * Long strings of the events this connection appended to its current stream: a later event
   * repeating one stores a reference instead (see event-references.ts). Same validity as
   * {@link recentValues}.
   */
  readonly eventStrings = new EventStrings();

  /** Characters of the bodies in {@link recentValues}. */
  #recentValueChars = 0;

  /**
   * Remembers the value chunks a committed write stored (see {@link recentValues}): bodies up to
   * 64 Ki characters, the newest ones up to 4 Mi characters in all.
   */
  rememberValues(added: readonly (readonly [string, number])[]): void {
    for (const [body, id] of added) {
      if (body.length > 65_536) continue;
      this.#forgetValue(body);
      this.recentValues.set(body, id);
      this.#recentValueChars += body.length;
    }
    while (this.#recentValueChars > 4_194_304) this.#forgetValue(this.recentValues.keys().next().value!);
  }

  #forgetValue(body: string): void {
    if (this.recentValues.delete(body)) this.#recentValueChars -= body.length;
  }

  /** Forgets every remembered value chunk. */
  forgetValues(): void {
    this.recentValues.clear();
    this.#recentValueChars = 0;
  }
  /**
   * The last checkpoint this connection wrote, while nothing else has changed the database: the
   * next write of the same run then needs no lookup of its parent. Cleared by this connection's own
   * removals; another connection's commits show in `PRAGMA data_version`.
   */
  lastWrite: LastWrite | undefined;

  /**
   * False for a connection opened read-only: reads of a database this provider did not write yet,
   * or of a damaged one.
   */
  readonly writable: boolean;

  /**
   * Why no write may go into this database: it failed SQLite's quick_check when it was opened for
   * writing (see integrity-check.ts). Every write fails with this error; reads still work.
   */
  readonly damage: CrewlineError | undefined;

  /** The statements of the `leases` table: writable connections only (see statements.ts). */
  readonly leases: LeaseStatements | undefined;

  /**
   * The lease row a fenced write of this connection last read, while no other connection has
   * committed since (`PRAGMA data_version`): the next fenced write then needs no lookup. Cleared by
   * this connection's own claims, renewals and releases.
   */
  knownLease: KnownLease | undefined;

  constructor(db: Database.Database, location: string, writable = true, damage?: CrewlineError) {
    this.db = db;
    this.location = location;
    this.writable = writable;
    this.damage = damage;
    this.statements = prepareStatements(db);
    this.leases = writable ? prepareLeaseStatements(db) : undefined;
    this.#use = db.memory ? undefined : DatabaseUse.open(location);
    this.#wal = new WalUpkeep(db, location, this.#use);
  }

  /** This connection counted among the process's connections to its database (see database-use.ts). */
  readonly #use: DatabaseUse | undefined;

  /** The upkeep of this connection's WAL (see wal-upkeep.ts). */
  readonly #wal: WalUpkeep;

  /** Lets this connection hand its WAL checkpoints to a thread of their own (see wal-checkpointer.ts). */
  checkpointOffThread(options: CheckpointerOptions): void {
    this.#wal.checkpointOffThread(options);
  }

  /** Sets the WAL bound for the database's size now (see `WalUpkeep.boundWal`). */
  boundWal(): void {
    this.#wal.boundWal();
  }

  /** Counts a write, and keeps the WAL short (see `WalUpkeep.noteWrite`). */
  noteWrite(): void {
    this.#wal.noteWrite();
  }

  /** Runs after this connection's handle is closed (see `removeCreatedSideFiles` in side-files.ts). */
  #afterClose: (() => void) | undefined;

  /** Sets what runs once this connection's handle is closed. */
  onClose(action: () => void): void {
    this.#afterClose = action;
  }

  close(): void {
    // First, so that this connection is the last one and its close copies the WAL back and removes it.
    this.#wal.close();
    if (this.writable) this.#wal.copyBack();
    this.heads.clear();
    if (this.db.open) {
      this.db.close();
      this.#afterClose?.();
    }
    // Once its handle is closed (a close that threw left it open, and its locks with it): the last
    // connection of this process to the database closes the -shm descriptor its checkpointer read.
    this.#use?.release();
  }
}
