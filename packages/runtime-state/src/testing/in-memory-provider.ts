import { component, stateError } from '../errors.js';
import { isValidBranchName, isValidCheckpointId } from '../ids.js';
import {
  foreignLease,
  type LeaseState,
  leaseHeldByOther,
  leaseLost,
  notTheHead,
} from '../internal/lease-refusals.js';
import { isSameCheckpoint, storedIdConflict } from '../internal/stored-id-conflict.js';
import type {
  CheckpointProvider,
  CheckpointWrite,
  Lease,
  LeaseRequest,
  LeaseToken,
  ListQuery,
  PruneOptions,
  PruneResult,
  RawCheckpoint,
  StoredCheckpoint,
} from '../provider.js';
import { PROVIDER_CONTRACT_VERSION } from '../provider.js';
import { planPrune, pruneOptionsProblem } from '../prune-plan.js';

interface Entry {
  info: StoredCheckpoint;
  text: string;
}

interface HeldLease {
  owner: string;
  holder: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** Refuses a lease token without a lineage id or owner. */
function checkToken(token: LeaseToken): void {
  const problem =
    token === null || typeof token !== 'object'
      ? 'a lease token must be an object { lineageId, owner }'
      : typeof token.lineageId !== 'string' || token.lineageId.length === 0
        ? 'lease lineageId must be a non-empty string'
        : typeof token.owner !== 'string' || token.owner.length === 0
          ? 'lease owner must be a non-empty string'
          : undefined;
  if (problem !== undefined) throw stateError('invalid_argument', problem);
}

/** Refuses a lease duration that is not a whole number of milliseconds, at least 1. */
function checkDuration(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1) {
    throw stateError(
      'invalid_argument',
      `lease ttlMs ${String(ttlMs)} is not allowed; pass a whole number of milliseconds, at least 1`,
    );
  }
}

/**
 * A provider that keeps checkpoints in memory, for tests of your own crews and flows. Locations are
 * independent namespaces; nothing touches the disk. It fences lineage heads like the database
 * providers (`capabilities.leases`), within this one provider instance: each call runs to its end
 * before another starts, so a claim, a renewal or a fenced write is atomic.
 */
export class InMemoryProvider implements CheckpointProvider {
  readonly kind = 'memory';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities = { syncWrite: true, incremental: false, leases: true };
  readonly #stores = new Map<string, Entry[]>();
  /** Leases by location, then by lineage. Deleting or pruning checkpoints leaves them alone. */
  readonly #leases = new Map<string, Map<string, HeldLease>>();

  resolveLocation(location: string): string {
    return location;
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    const hash = reference.lastIndexOf('#');
    if (hash < 0) return this.#stores.has(reference) ? { location: reference } : undefined;
    return { location: reference.slice(0, hash), id: reference.slice(hash + 1) };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const { metadata } = checkpoint;
    if (
      !isValidCheckpointId(metadata.id) ||
      !isValidBranchName(metadata.branch) ||
      (metadata.parentId !== null && !isValidCheckpointId(metadata.parentId))
    ) {
      throw stateError(
        'invalid_name',
        `checkpoint id "${metadata.id}", parent "${metadata.parentId}" or branch "${metadata.branch}" is not allowed`,
      );
    }
    if (checkpoint.lease !== undefined) this.#checkWriteLease(location, checkpoint);
    // A retried write whose first attempt was stored gets it back; another checkpoint under its id
    // is refused, as the database providers refuse it (its children would name a parent that is gone).
    const existing = this.#stores.get(location)?.find((entry) => entry.info.id === metadata.id);
    if (existing !== undefined) {
      if (isSameCheckpoint(existing.info, metadata)) return structuredClone(existing.info);
      throw storedIdConflict(component, metadata.id, `memory location "${location}"`);
    }
    const text = checkpoint.text();
    const info: StoredCheckpoint = {
      ...metadata,
      reference: `${location}#${metadata.id}`,
      sizeBytes: Buffer.byteLength(text),
    };
    const entries = this.#stores.get(location) ?? [];
    entries.push({ info: structuredClone(info), text });
    this.#stores.set(location, entries);
    return info;
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.writeSync(location, checkpoint);
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const entry = this.#stores.get(location)?.find((candidate) => candidate.info.id === id);
    if (!entry) throw stateError('not_found', `no checkpoint "${id}" in memory location "${location}"`);
    return { text: entry.text };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    return (this.#stores.get(location) ?? [])
      .map((entry) => structuredClone(entry.info))
      .filter(
        (info) =>
          (query.branch === undefined || info.branch === query.branch) &&
          (query.lineageId === undefined || info.lineageId === query.lineageId),
      )
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined> {
    return (await this.list(location, query)).at(-1);
  }

  /**
   * Per branch, removes a checkpoint when it is beyond the newest `keep` AND older than `olderThan`
   * (with one option, that option alone decides). `olderThan` alone never removes a branch's newest
   * checkpoint, so every branch stays resumable; `keep` must be at least 1 for the same reason.
   */
  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    const problem = pruneOptionsProblem(options);
    if (problem !== undefined) throw stateError('invalid_argument', problem);
    const removed = planPrune(await this.list(location), options);
    if (!options.dryRun) {
      const ids = new Set(removed.map((info) => info.id));
      this.#stores.set(
        location,
        (this.#stores.get(location) ?? []).filter((entry) => !ids.has(entry.info.id)),
      );
    }
    return { removed, dryRun: options.dryRun ?? false };
  }

  #leasesOf(location: string): Map<string, HeldLease> {
    let leases = this.#leases.get(location);
    if (leases === undefined) {
      leases = new Map();
      this.#leases.set(location, leases);
    }
    return leases;
  }

  #lost(lineageId: string, owner: string, lease: HeldLease | undefined, now: number, what: string) {
    const state: LeaseState =
      lease === undefined
        ? { held: false, mine: false, holder: null, expiresInMs: null }
        : {
            held: true,
            mine: lease.owner === owner,
            holder: lease.holder,
            expiresInMs: lease.expiresAt - now,
          };
    return leaseLost(component, lineageId, state, what);
  }

  #checkWriteLease(location: string, checkpoint: CheckpointWrite): void {
    const { lease, metadata } = checkpoint;
    if (lease!.lineageId !== metadata.lineageId) {
      throw foreignLease(component, metadata.id, metadata.lineageId, lease!.lineageId);
    }
    const held = this.#leases.get(location)?.get(metadata.lineageId);
    const now = Date.now();
    if (held !== undefined && held.owner === lease!.owner && held.expiresAt > now) return;
    throw this.#lost(
      metadata.lineageId,
      lease!.owner,
      held,
      now,
      `checkpoint "${metadata.id}" was not stored`,
    );
  }

  /** Claims a lineage head: see `LeaseRequest` in the provider contract. */
  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    checkToken(request);
    checkDuration(request.ttlMs);
    if (typeof request.holder !== 'string')
      throw stateError('invalid_argument', 'lease holder must be a string');
    const { lineageId, owner, checkpointId, holder, ttlMs } = request;
    const leases = this.#leasesOf(location);
    const now = Date.now();
    const current = leases.get(lineageId);
    if (current !== undefined && current.owner !== owner && current.expiresAt > now) {
      throw leaseHeldByOther(component, lineageId, current.holder, current.expiresAt - now);
    }
    // Found without awaiting anything: the check and the grant must run in one turn.
    let headId: string | null = null;
    for (const entry of this.#stores.get(location) ?? []) {
      if (entry.info.lineageId === lineageId && (headId === null || entry.info.id > headId))
        headId = entry.info.id;
    }
    if (headId !== checkpointId) throw notTheHead(component, lineageId, checkpointId, headId);
    const expiresAt = now + ttlMs;
    leases.set(lineageId, { owner, holder, expiresAt });
    return { lineageId, owner, holder, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** Extends a held lease; `conflict` when it was taken over or released. */
  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    checkToken(token);
    checkDuration(ttlMs);
    const current = this.#leases.get(location)?.get(token.lineageId);
    const now = Date.now();
    if (current === undefined || current.owner !== token.owner) {
      throw this.#lost(token.lineageId, token.owner, current, now, 'the lease was not renewed');
    }
    // Ran out but still this owner's: a claim would have changed the owner and a release removed the
    // entry, so nobody else can have written under it since.
    current.expiresAt = now + ttlMs;
    return {
      lineageId: token.lineageId,
      owner: token.owner,
      holder: current.holder,
      expiresAt: new Date(current.expiresAt).toISOString(),
    };
  }

  /** Gives a lease up; nothing happens when `owner` does not hold it. */
  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    checkToken(token);
    const leases = this.#leases.get(location);
    if (leases?.get(token.lineageId)?.owner === token.owner) leases.delete(token.lineageId);
  }

  async delete(location: string, id: string): Promise<boolean> {
    const entries = this.#stores.get(location);
    if (!entries) return false;
    const next = entries.filter((entry) => entry.info.id !== id);
    this.#stores.set(location, next);
    return next.length !== entries.length;
  }
}
