export { describeCheckpointProvider } from './describe-checkpoint-provider.js';
export type { ConcurrentWriters, CorruptionMode, MaybePromise, ProviderTestkitOptions } from './options.js';
export { filesContaining, storageFiles } from './storage-scan.js';
