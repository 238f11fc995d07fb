export { DEFAULT_SCHEMA } from './location.js';
export type { PostgresProviderOptions, ResolvedPostgresProviderOptions } from './options.js';
export { parsePostgresProviderOptions } from './options.js';
export { type PostgresListQuery, PostgresProvider } from './postgres-provider.js';
export type { DatabaseStats, GarbageReport } from './reports.js';
export { APPLICATION_MARKER, SCHEMA_VERSION } from './schema.js';
