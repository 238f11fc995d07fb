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
export { HeadCache } from './chunk-tree/head-cache.js';
export {
  type ChunkLoader,
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
export { documentHeader, encodedDocumentSize } from './document-size.js';
export {
  foreignLease,
  type LeaseState,
  leaseHeldByOther,
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
export { invalidOptions } from './provider-options.js';
