// The public surface of @crewline/provider-postgres, one name at a time.
export type { PostgresListQuery } from './list-checkpoints.js';
export { DEFAULT_SCHEMA } from './location.js';
export type { PostgresProviderOptions, ResolvedPostgresProviderOptions } from './options.js';
export { PostgresProvider } from './postgres-provider.js';
export type { DatabaseStats, GarbageReport } from './reports.js';
