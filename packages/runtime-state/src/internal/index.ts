// For crewline's own providers (SQLite, Postgres, JSON) and nothing else: what they share about the
// layout of a stored checkpoint and the words of their refusals. Not part of the public API — any
// name here may change or go in any release, minor and patch included. Build on `.` instead.
export {
  checkId,
  checkLeaseDuration,
  checkLeaseRequest,
  checkLeaseToken,
  checkPruneOptions,
  checkQuery,
} from './arguments.js';
export { type CheckedNames, checkCheckpointWrite } from './checkpoint-checks.js';
export {
  type ChunkLoader,
  damagedData,
  decodeHead,
  headBody,
  isDamagedData,
  referencedChunks,
  seedHead,
} from './chunk-tree/tree-decoder.js';
export { TreeEncoder } from './chunk-tree/tree-encoder.js';
export { type ChunkSink, type EncodedNode, prettyBytes, utf8Length } from './chunk-tree/tree-node.js';
export { type DocumentSizeParts, documentHeader, documentSize } from './document-size.js';
export {
  durationText,
  foreignLease,
  type LeaseState,
  leaseHeldByOther,
  leaseLost,
  notTheHead,
} from './lease-refusals.js';
export {
  canonicalMetadataText,
  type DamagedSummaries,
  hasCanonicalShape,
  type MetadataColumns,
  storedFromRawRow,
  storedFromRow,
  writtenCheckpoint,
} from './metadata-columns.js';
export { invalidOptions, type OptionIssue } from './provider-options.js';
