export {
  type BuiltinProvidersOptions,
  builtinProviders,
  type ModuleImporter,
} from './builtin-providers.js';
export { type CheckpointWriteParts, createCheckpointWrite } from './checkpoint-write.js';
export {
  type CheckpointConfig,
  type CheckpointConfigInput,
  type CheckpointSetting,
  DEFAULT_CHECKPOINT_LOCATION,
  parseCheckpointConfig,
  resolveCheckpointSetting,
  triggersOn,
} from './config.js';
export {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointMetadata,
  type EntityKind,
  type EntitySnapshot,
  type EntitySummary,
  type Migration,
  validateDocument,
  validateMetadata,
} from './document.js';
export {
  DEFAULT_MAX_CHECKPOINT_BYTES,
  type DocumentTextParts,
  joinDocumentText,
  type ParseOptions,
  parseDocumentText,
} from './document-text.js';
export { formatIssues } from './errors.js';
export {
  isValidBranchName,
  isValidCheckpointId,
  newCheckpointId,
  newForkBranchName,
  newLineageId,
} from './ids.js';
export type { JsonObject, JsonPrimitive, JsonValue } from './json.js';
export { LazyProvider, readyProvider } from './lazy-provider.js';
export { type ModelPrice, type ModelPrices, parseModelPrices } from './model-prices.js';
export { MAX_NESTING_DEPTH } from './nesting-depth.js';
export {
  type CheckpointProvider,
  type CheckpointWrite,
  isCheckpointProvider,
  type Lease,
  type LeaseRequest,
  type LeaseToken,
  type ListingWithUnreadable,
  type ListQuery,
  type ParsedCheckpoint,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type SettledParts,
  type StoredCheckpoint,
  type UnreadableCheckpoint,
} from './provider.js';
export {
  createProviderRegistry,
  type ProviderEntry,
  type ProviderRegistry,
  providerEntryOf,
  type StoredProviderOptions,
} from './provider-registry.js';
export { type PruneCandidate, planPrune, pruneOptionsProblem } from './prune-plan.js';
export { type RedactionMarks, redactSecrets } from './redaction.js';
export {
  type LoadedCheckpoint,
  loadCheckpoint,
  type ReadOptions,
  type ResolvedReference,
  type ResolveOptions,
  readDocument,
  resolveReference,
} from './reference.js';
export {
  describeModelCost,
  describeRunCost,
  formatUsd,
  type LineageCost,
  lineageCost,
  type ModelCost,
  type ModelCostStatus,
  type ModelTokens,
  OFFLINE_MODEL_PREFIX,
  type RunCost,
  type RunCostStatus,
  runCost,
} from './run-cost.js';
export type { CheckpointableEntity } from './run-entities.js';
export { RuntimeState, type RuntimeStateOptions } from './runtime-state.js';
export { SettledValues } from './settled-values.js';
export {
  createValueCodec,
  decodeValue,
  type EncodedValue,
  encodeValue,
  MAX_VALUE_DEPTH,
  toJsonSafe,
  type ValueClass,
  type ValueClassEntry,
  type ValueCodec,
  type ValueCodecOptions,
} from './value-codec.js';
export type { WriteOptions } from './write/checkpoint-preparation.js';
export type { Lineage } from './write/run-lineage.js';
export type { HeldLease } from './write/write-target.js';
