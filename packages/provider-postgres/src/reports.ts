// What the provider reports about a location: plain types, so its public declarations need no pg.

/** Counts and sizes of one location's tables. */
export interface DatabaseStats {
  schema: string;
  schemaVersion: number;
  checkpoints: number;
  streams: number;
  events: number;
  chunks: number;
  leases: number;
  /** `pg_total_relation_size` of the schema's tables (rows, TOAST and indexes), in bytes. */
  totalBytes: number;
}

/** What one garbage collection removed. */
export interface GarbageReport {
  streams: number;
  events: number;
  chunks: number;
}
