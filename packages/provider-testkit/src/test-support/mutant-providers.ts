import { CrewlineError } from '@crewline/events';
import type {
  CheckpointProvider,
  CheckpointWrite,
  ListQuery,
  PruneOptions,
  PruneResult,
  RawCheckpoint,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';

/**
 * Providers with one deliberate defect each. The testkit's self-test runs the suite against every
 * one and requires at least one failing test per mutant: proof that the suite can fail.
 */
class Mutant implements CheckpointProvider {
  readonly kind = 'mutant';
  readonly contractVersion = 1 as const;
  readonly capabilities = { syncWrite: true, incremental: false, leases: false };
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

export const mutants: Record<string, () => CheckpointProvider> = {
  'lists newest first': () => new ListsNewestFirst(),
  'prune ignores the branch': () => new PruneIgnoresBranch(),
  'prune ignores the lineage': () => new PruneIgnoresLineage(),
  'prunes per branch': () => new PrunesPerBranch(),
  'dry run deletes': () => new DryRunDeletes(),
  'prunes by either rule': () => new PrunesByEitherRule(),
  'forgets parents': () => new ForgetsParents(),
  'reads the latest whatever the id': () => new ReadsTheLatest(),
  'pretends to store bad names': () => new PretendsToStoreBadNames(),
  'throws plain errors': () => new ThrowsPlainErrors(),
  'ignores the location': () => new IgnoresLocation(),
  'loses concurrent writes': () => new LosesConcurrentWrites(),
};
