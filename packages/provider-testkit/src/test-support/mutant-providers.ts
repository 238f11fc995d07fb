import { CrewlineError } from '@crewline/events';
import type {
  CheckpointProvider,
  CheckpointWrite,
  Lease,
  LeaseRequest,
  LeaseToken,
  ListQuery,
  ProviderCapabilities,
  PruneOptions,
  PruneResult,
  RawCheckpoint,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { planPrune } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';

/**
 * Providers with one deliberate defect each. The testkit's self-test runs the suite against every
 * one and requires at least one failing test per mutant: proof that the suite can fail.
 */
class Mutant implements CheckpointProvider {
  readonly kind = 'mutant';
  readonly contractVersion = 1 as const;
  readonly capabilities: ProviderCapabilities = { syncWrite: true, incremental: false, leases: false };
  protected readonly inner = new InMemoryProvider();

  resolveLocation(location: string): string {
    return this.inner.resolveLocation(location);
  }
  parseReference(reference: string) {
    return this.inner.parseReference(reference);
  }
  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    return this.inner.writeSync(location, checkpoint);
  }
  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.inner.write(location, checkpoint);
  }
  read(location: string, id: string): Promise<RawCheckpoint> {
    return this.inner.read(location, id);
  }
  list(location: string, query?: ListQuery): Promise<StoredCheckpoint[]> {
    return this.inner.list(location, query);
  }
  latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined> {
    return this.inner.latest(location, query);
  }
  prune(location: string, options: PruneOptions): Promise<PruneResult> {
    return this.inner.prune(location, options);
  }
  delete(location: string, id: string): Promise<boolean> {
    return this.inner.delete(location, id);
  }
}

class ListsNewestFirst extends Mutant {
  override async list(location: string, query?: ListQuery) {
    return (await super.list(location, query)).reverse();
  }
}

class PruneIgnoresBranch extends Mutant {
  override prune(location: string, options: PruneOptions) {
    const { branch: _ignored, ...rest } = options;
    return super.prune(location, rest);
  }
}

class PruneIgnoresLineage extends Mutant {
  override prune(location: string, options: PruneOptions) {
    const { lineageId: _ignored, ...rest } = options;
    return super.prune(location, rest);
  }
}

/** The rule before 0.2: keep N per branch, whatever run, fork point or head a checkpoint is. */
class PrunesPerBranch extends Mutant {
  override async prune(location: string, options: PruneOptions) {
    const listed = await super.list(location, options.branch === undefined ? {} : { branch: options.branch });
    const keep = options.keep ?? 1;
    const cutoff = options.olderThan?.getTime();
    const removed = listed.filter((entry) => {
      const sameBranch = listed.filter((other) => other.branch === entry.branch);
      const beyondKeep = sameBranch.indexOf(entry) < sameBranch.length - keep;
      return beyondKeep && (cutoff === undefined || Date.parse(entry.createdAt) < cutoff);
    });
    if (!options.dryRun) for (const entry of removed) await super.delete(location, entry.id);
    return { removed, dryRun: options.dryRun ?? false };
  }
}

/**
 * A prune of one run that plans over that run's checkpoints and the forks of them only (what
 * PostgresProvider read before fork starts were kept): it cannot see that the run's first
 * checkpoint names a checkpoint of another run, and removes the one link from a fork to its origin.
 */
class PrunesOneRunBlindToItsOrigin extends Mutant {
  override async prune(location: string, options: PruneOptions) {
    if (options.lineageId === undefined) return super.prune(location, options);
    const listed = await super.list(location);
    const own = new Set(
      listed.filter((entry) => entry.lineageId === options.lineageId).map((entry) => entry.id),
    );
    const seen = listed.filter(
      (entry) => own.has(entry.id) || (entry.parentId !== null && own.has(entry.parentId)),
    );
    const removed = planPrune(seen, options);
    if (!options.dryRun) for (const entry of removed) await super.delete(location, entry.id);
    return { removed, dryRun: options.dryRun ?? false };
  }
}

class DryRunDeletes extends Mutant {
  override async prune(location: string, options: PruneOptions) {
    const result = await super.prune(location, { ...options, dryRun: false });
    return { ...result, dryRun: options.dryRun ?? false };
  }
}

/** The rules before 0.2: either option selects, `olderThan` takes a branch's latest, `keep: 0` accepted. */
class PrunesByEitherRule extends Mutant {
  override async prune(location: string, options: PruneOptions) {
    const listed = await super.list(location, options.branch === undefined ? {} : { branch: options.branch });
    const cutoff = options.olderThan?.getTime();
    const removed = listed.filter((entry) => {
      const sameBranch = listed.filter((other) => other.branch === entry.branch);
      const beyondKeep =
        options.keep !== undefined && sameBranch.indexOf(entry) < sameBranch.length - options.keep;
      return beyondKeep || (cutoff !== undefined && Date.parse(entry.createdAt) < cutoff);
    });
    if (!options.dryRun) for (const entry of removed) await super.delete(location, entry.id);
    return { removed, dryRun: options.dryRun ?? false };
  }
}

class ForgetsParents extends Mutant {
  override async list(location: string, query?: ListQuery) {
    return (await super.list(location, query)).map((entry) => ({ ...entry, parentId: null }));
  }
}

class ReadsTheLatest extends Mutant {
  override async read(location: string, id: string) {
    const latest = await super.latest(location);
    return super.read(location, latest?.id ?? id);
  }
}

class PretendsToStoreBadNames extends Mutant {
  override async write(location: string, checkpoint: CheckpointWrite) {
    try {
      return await super.write(location, checkpoint);
    } catch {
      return { ...checkpoint.metadata, reference: `${location}#${checkpoint.metadata.id}` };
    }
  }
}

class ThrowsPlainErrors extends Mutant {
  override async read(location: string, id: string) {
    try {
      return await super.read(location, id);
    } catch (error) {
      if (CrewlineError.isInstance(error)) throw new Error(error.message);
      throw error;
    }
  }
}

class IgnoresLocation extends Mutant {
  override writeSync(_location: string, checkpoint: CheckpointWrite) {
    return super.writeSync('shared', checkpoint);
  }
  override write(_location: string, checkpoint: CheckpointWrite) {
    return super.write('shared', checkpoint);
  }
  override read(_location: string, id: string) {
    return super.read('shared', id);
  }
  override list(_location: string, query?: ListQuery) {
    return super.list('shared', query);
  }
  override latest(_location: string, query?: ListQuery) {
    return super.latest('shared', query);
  }
  override prune(_location: string, options: PruneOptions) {
    return super.prune('shared', options);
  }
  override delete(_location: string, id: string) {
    return super.delete('shared', id);
  }
}

/** Another checkpoint under a stored id replaces it (what a file per name, or an upsert, does). */
class ReplacesUnderAStoredId extends Mutant {
  override writeSync(location: string, checkpoint: CheckpointWrite) {
    // The in-memory delete does its work before it returns its promise.
    void this.inner.delete(location, checkpoint.metadata.id);
    return super.writeSync(location, checkpoint);
  }
  override async write(location: string, checkpoint: CheckpointWrite) {
    await this.inner.delete(location, checkpoint.metadata.id);
    return super.write(location, checkpoint);
  }
}

/** Read-modify-write with a pause in between: concurrent writes overwrite each other. */
class LosesConcurrentWrites extends Mutant {
  readonly #snapshots = new Map<string, CheckpointWrite[]>();
  override async write(location: string, checkpoint: CheckpointWrite) {
    const before = [...(this.#snapshots.get(location) ?? [])];
    await new Promise((resolve) => setTimeout(resolve, 1));
    const after = [...before, checkpoint];
    this.#snapshots.set(location, after);
    for (const existing of await super.list(location)) await super.delete(location, existing.id);
    let stored: StoredCheckpoint | undefined;
    for (const write of after) stored = await super.write(location, write);
    return stored!;
  }
}

/** A provider that fences heads (the in-memory provider's leases), for the lease mutants below. */
class LeaseMutant extends Mutant {
  override readonly capabilities: ProviderCapabilities = {
    syncWrite: true,
    incremental: false,
    leases: true,
  };
  /** The owner of each lineage's latest granted claim, as the mutants below need to know it. */
  protected readonly owners = new Map<string, string>();

  claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    return this.inner.claimLease(location, request).then((lease) => {
      this.owners.set(`${location}\u0000${request.lineageId}`, request.owner);
      return lease;
    });
  }
  renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    return this.inner.renewLease(location, token, ttlMs);
  }
  releaseLease(location: string, token: LeaseToken): Promise<void> {
    return this.inner.releaseLease(location, token);
  }
  protected ownerOf(location: string, lineageId: string): string | undefined {
    return this.owners.get(`${location}\u0000${lineageId}`);
  }
}

function fakeLease(request: LeaseRequest): Lease {
  return {
    lineageId: request.lineageId,
    owner: request.owner,
    holder: request.holder,
    expiresAt: new Date(Date.now() + request.ttlMs).toISOString(),
  };
}

/** Says yes to every claim: two runs continue one head. */
class GrantsEveryClaim extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    try {
      return await super.claimLease(location, request);
    } catch {
      return fakeLease(request);
    }
  }
}

/** Stores every write, lease or not: a run that lost its head keeps writing. */
class IgnoresTheLeaseOnWrite extends LeaseMutant {
  override writeSync(location: string, checkpoint: CheckpointWrite) {
    return super.writeSync(location, { ...checkpoint, lease: undefined });
  }
  override write(location: string, checkpoint: CheckpointWrite) {
    return super.write(location, { ...checkpoint, lease: undefined });
  }
}

/** Grants a claim of any checkpoint of the run, not only its head: a stale resume continues. */
class IgnoresTheHead extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    const head = (await this.inner.latest(location, { lineageId: request.lineageId }))?.id ?? null;
    return super.claimLease(location, { ...request, checkpointId: head });
  }
}

/** Leases never run out: a dead holder's run can never be taken over. */
class LeasesNeverExpire extends LeaseMutant {
  override claimLease(location: string, request: LeaseRequest) {
    return super.claimLease(location, { ...request, ttlMs: 3_600_000 });
  }
  override renewLease(location: string, token: LeaseToken) {
    return super.renewLease(location, token, 3_600_000);
  }
}

/** Renews whatever is asked: a holder that lost its lease believes it still holds it. */
class RenewsLostLeases extends LeaseMutant {
  override async renewLease(location: string, token: LeaseToken, ttlMs: number) {
    try {
      return await super.renewLease(location, token, ttlMs);
    } catch {
      return fakeLease({ ...token, checkpointId: null, holder: 'unknown', ttlMs });
    }
  }
}

/** Releases the lease whoever asks. */
class ReleasedByAnyone extends LeaseMutant {
  override releaseLease(location: string, token: LeaseToken) {
    const owner = this.ownerOf(location, token.lineageId) ?? token.owner;
    return super.releaseLease(location, { ...token, owner });
  }
}

/** Refuses claims with a `conflict` that does not say who holds the head. */
class ConflictsWithoutTheHolder extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    try {
      return await super.claimLease(location, request);
    } catch (error) {
      if (!CrewlineError.hasCode(error, 'conflict')) throw error;
      throw new CrewlineError('mutant', 'conflict', 'the head is taken');
    }
  }
}

/**
 * Refuses claims of a held run naming the holder but not `details.atClaim` (the JSON lock did):
 * a caller cannot tell that nothing ran, so the CLI offered no `--on-conflict fork`.
 */
class ClaimConflictsWithoutAtClaim extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    try {
      return await super.claimLease(location, request);
    } catch (error) {
      if (!CrewlineError.hasCode(error, 'conflict') || error.details?.atClaim !== true) throw error;
      const { atClaim: _atClaim, ...details } = error.details;
      throw new CrewlineError('mutant', 'conflict', error.message, { details });
    }
  }
}

/** Deleting a checkpoint releases its run's lease. */
class DeleteReleasesTheLease extends LeaseMutant {
  override async delete(location: string, id: string) {
    const listed = (await this.inner.list(location)).find((entry) => entry.id === id);
    const owner = listed === undefined ? undefined : this.ownerOf(location, listed.lineageId);
    if (listed !== undefined && owner !== undefined)
      await super.releaseLease(location, { lineageId: listed.lineageId, owner });
    return super.delete(location, id);
  }
}

/** One lease per location whatever the run: claims on different runs block each other. */
class OneLeasePerLocation extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    for (const [key, owner] of this.owners) {
      const [where, lineageId] = key.split('\u0000');
      if (where !== location || lineageId === request.lineageId || owner === request.owner) continue;
      throw new CrewlineError('mutant', 'conflict', `${request.lineageId} waits for ${lineageId}`, {
        details: { lineageId: request.lineageId, holder: 'another run', expiresInMs: 1 },
      });
    }
    return super.claimLease(location, request);
  }
}

/** A run's lease in one location blocks the same run id in every other location. */
class LeasesShareLocations extends LeaseMutant {
  override async claimLease(location: string, request: LeaseRequest) {
    for (const [key, owner] of this.owners) {
      const [where, lineageId] = key.split('\u0000');
      if (where === location || lineageId !== request.lineageId || owner === request.owner) continue;
      throw new CrewlineError('mutant', 'conflict', `${lineageId} is held in ${where}`, {
        details: { lineageId, holder: 'elsewhere', expiresInMs: 1 },
      });
    }
    return super.claimLease(location, request);
  }
}

export const mutants: Record<string, () => CheckpointProvider> = {
  'grants every claim': () => new GrantsEveryClaim(),
  'ignores the lease on write': () => new IgnoresTheLeaseOnWrite(),
  'ignores the head': () => new IgnoresTheHead(),
  'leases never expire': () => new LeasesNeverExpire(),
  'renews lost leases': () => new RenewsLostLeases(),
  'released by anyone': () => new ReleasedByAnyone(),
  'conflicts without the holder': () => new ConflictsWithoutTheHolder(),
  'claim conflicts without atClaim': () => new ClaimConflictsWithoutAtClaim(),
  'delete releases the lease': () => new DeleteReleasesTheLease(),
  'one lease per location': () => new OneLeasePerLocation(),
  'leases share locations': () => new LeasesShareLocations(),
  'lists newest first': () => new ListsNewestFirst(),
  'prune ignores the branch': () => new PruneIgnoresBranch(),
  'prune ignores the lineage': () => new PruneIgnoresLineage(),
  'prunes per branch': () => new PrunesPerBranch(),
  'prunes one run blind to its origin': () => new PrunesOneRunBlindToItsOrigin(),
  'dry run deletes': () => new DryRunDeletes(),
  'prunes by either rule': () => new PrunesByEitherRule(),
  'forgets parents': () => new ForgetsParents(),
  'reads the latest whatever the id': () => new ReadsTheLatest(),
  'pretends to store bad names': () => new PretendsToStoreBadNames(),
  'throws plain errors': () => new ThrowsPlainErrors(),
  'ignores the location': () => new IgnoresLocation(),
  'loses concurrent writes': () => new LosesConcurrentWrites(),
  'replaces a checkpoint under a stored id': () => new ReplacesUnderAStoredId(),
};
