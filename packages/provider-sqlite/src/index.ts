// The public surface of @crewline/provider-sqlite, one name at a time.
export type { DatabaseStats } from './maintenance/database-stats.js';
export type { GarbageReport } from './maintenance/garbage-collector.js';
export type { ResolvedSqliteProviderOptions, SqliteProviderOptions } from './options.js';
export { SqliteProvider } from './sqlite-provider.js';
