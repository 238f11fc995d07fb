export type { DatabaseStats } from './database-stats.js';
export type { GarbageReport } from './garbage-collector.js';
export { DEFAULT_SCHEMA } from './location.js';
export type { PostgresProviderOptions, ResolvedPostgresProviderOptions } from './options.js';
export { parsePostgresProviderOptions } from './options.js';
export { type PostgresListQuery, PostgresProvider } from './postgres-provider.js';
export { APPLICATION_MARKER, SCHEMA_VERSION } from './schema.js';
