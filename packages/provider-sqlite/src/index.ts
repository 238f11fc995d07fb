export type { DatabaseStats } from './database-stats.js';
export type { GarbageReport } from './garbage-collector.js';
export type { ResolvedSqliteProviderOptions, SqliteProviderOptions } from './options.js';
export { parseSqliteProviderOptions } from './options.js';
export { APPLICATION_MARKER, SCHEMA_VERSION } from './schema.js';
export { SqliteProvider } from './sqlite-provider.js';
