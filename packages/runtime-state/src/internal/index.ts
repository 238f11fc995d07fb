// For crewline's own packages and nothing else: what the providers (SQLite, Postgres, JSON) share
// about the layout of a stored checkpoint and the words of their refusals, and the data a checkpoint
// holds for each entity (crew, agent, flow) that the runtime, CLI and TUI read and edit. Not part of
// the public API — any name here may change or go in any release, minor and patch included. Build on
// `.` instead.

export { documentHeader } from '../document-text.js';
export * from '../entity-data/index.js';
export { branchNameRule } from '../ids.js';
export { registerInputSecrets } from '../input-secrets.js';
export { keptEntity } from '../kept-entity.js';
export { matchShortId } from '../reference.js';
export {
  checkId,
  checkLeaseDuration,
  checkLeaseRequest,
  checkLeaseToken,
  checkPruneOptions,
  checkQuery,
} from './arguments.js';
export { type CheckedNames, checkCheckpointWrite } from './checkpoint-checks.js';
export { HeadCache } from './chunk-tree/head-cache.js';
export {
  type ChunkLoader,
  chunkReferences,
  damagedCheckpoint,
  damagedData,
  decodeHead,
  headBody,
  isDamagedData,
  referencedChunks,
  seedHead,
} from './chunk-tree/tree-decoder.js';
export { TreeEncoder } from './chunk-tree/tree-encoder.js';
export { type EncodedNode, utf8Length } from './chunk-tree/tree-node.js';
export {
  encodedDocumentSize,
  type StoredEnvelope,
  storedDocument,
  storedDocumentText,
} from './document-size.js';
export { editDistance, nearestName } from './edit-distance.js';
export {
  type DetectPackageManagerOptions,
  detectPackageManager,
  installCommand,
  type PackageManager,
} from './install-command.js';
export { leaseSafetyMarginMs, localLeaseDeadline } from './lease-deadline.js';
export {
  foreignLease,
  type LeaseState,
  leaseHeldAdvice,
  leaseHeldByOther,
  leaseHeldMessage,
  leaseLost,
  notTheHead,
} from './lease-refusals.js';
export {
  canonicalMetadataText,
  hasCanonicalShape,
  type MetadataColumns,
  metadataColumnsOf,
  rewrittenCheckpoint,
  storedFromRawRow,
  storedFromRow,
  writtenCheckpoint,
} from './metadata-columns.js';
export { missingCheckpointMessage } from './missing-checkpoint.js';
export { newerHeadId } from './newer-head.js';
export { type ProcessIdentity, processIsGone, processRunsHere, thisProcess } from './process-identity.js';
export { invalidOptions } from './provider-options.js';
export { shellWord } from './shell-word.js';
export { type CheckpointIdentity, isSameCheckpoint, storedIdConflict } from './stored-id-conflict.js';
export { unreadableCodes } from './unreadable-codes.js';
