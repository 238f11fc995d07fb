// The provider contract as packages/runtime-state/README.md lists it. Compiled, not run: the type
// test at the bottom fails the typecheck when the listing and the real `CheckpointProvider` differ.
import type {
  CheckpointWrite,
  CheckpointProvider as ExportedCheckpointProvider,
  Lease,
  LeaseRequest,
  LeaseToken,
  ListingWithUnreadable,
  ListQuery,
  ParsedCheckpoint,
  PruneOptions,
  PruneResult,
  StoredCheckpoint,
} from '@crewline/runtime-state';

// #region contract
interface CheckpointProvider {
  readonly kind: string; // 'json', 'sqlite', ...
  readonly contractVersion: 1;
  readonly capabilities: {
    syncWrite: boolean;
    incremental: boolean;
    leases: boolean;
    backgroundWrites?: boolean;
    commitsCompletionsAtOnce?: boolean; // with backgroundWrites: a model completion's checkpoint committed inside its event
  };
  resolveLocation(location: string): string;
  parseReference(
    reference: string,
  ): { location: string; id?: string; checkpoint?: StoredCheckpoint } | undefined;
  writeSync?(location: string, checkpoint: CheckpointWrite): StoredCheckpoint;
  write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint>;
  writeBatch?(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]>; // in order, each whole
  read(location: string, id: string): Promise<{ text: string } | { document: unknown }>;
  readParsed?(location: string, id: string, options: { maxBytes: number }): Promise<ParsedCheckpoint>; // { document, eventLines? }: what read's text parses to, without the text
  list(location: string, query?: ListQuery): Promise<StoredCheckpoint[]>; // ListQuery: { branch?, lineageId? }
  listWithUnreadable?(location: string, query?: ListQuery): Promise<ListingWithUnreadable>; // { checkpoints, unreadable: { id, branch, parentId?, reference, sizeBytes?, reason }[] }
  latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined>;
  prune(location: string, options: PruneOptions): Promise<PruneResult>; // { keep?, olderThan?, branch?, lineageId?, dryRun? } → { removed, dryRun }, per run (planPrune)
  delete(location: string, id: string): Promise<boolean>;
  claimLease?(location: string, request: LeaseRequest): Promise<Lease>; // { lineageId, owner, checkpointId, holder, ttlMs }
  renewLease?(location: string, token: LeaseToken, ttlMs: number): Promise<Lease>; // token: { lineageId, owner }
  releaseLease?(location: string, token: LeaseToken): Promise<void>;
  runEnded?(location: string): Promise<void>; // a run that wrote here ended and its writes settled (not on a signal's way out): let go of what was kept for its next writes
  close?(): void | Promise<void>;
  checkLocationExists?(location: string): Promise<void>; // not_found when the location does not exist (a misspelt Postgres schema); list lists nothing there
}
// #endregion contract

/** True only when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const listingMatchesTheContract: Equal<CheckpointProvider, ExportedCheckpointProvider> = true;
