import { randomBytes } from 'node:crypto';
import type { CorruptionMode } from '@crewline/provider-testkit';
import pg from 'pg';
import { afterEach, describe, inject } from 'vitest';
import { parseLocation } from '../location.js';

/** The server of this test run (see global-setup.ts); undefined when there is none. */
export function testServerUrl(): string | undefined {
  return inject('postgresUrl');
}

/**
 * `describe`, skipped when there is no server (global-setup.ts printed the one line that says how
 * to get one; under CI it failed instead).
 */
export const describeWithPostgres: typeof describe.skip = describe.skipIf(testServerUrl() === undefined);

/** A fresh schema name. */
export function temporarySchemaName(): string {
  return `test_${randomBytes(6).toString('hex')}`;
}

/** A location in a fresh schema of the test server (nothing is created until a write). */
export function temporaryLocation(schema = temporarySchemaName()): string {
  const url = testServerUrl()!;
  return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
}

/** A client of the test server, for what the tests do behind the provider's back. */
export async function withServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServerUrl()! });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function schemaOf(location: string): string {
  return parseLocation(location, 'crewline').schema;
}

/** Drops the schema of a location made by {@link temporaryLocation}. */
export async function dropLocation(location: string): Promise<void> {
  await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schemaOf(location)}" CASCADE`));
}

/**
 * Damages one stored checkpoint the way the testkit asks, through a separate connection (as another
 * process, or a disk error, would):
 * - `truncate`: the body of its head chunk cut in half;
 * - `garbage`: that body replaced by text that is not JSON;
 * - `newer-version`: the stored format version set to 999;
 * - `proto`: a raw `"__proto__"` member added to the stored metadata text.
 */
export async function corruptCheckpoint(location: string, id: string, mode: CorruptionMode): Promise<void> {
  const s = `"${schemaOf(location)}"`;
  await withServer(async (client) => {
    const { rows } = await client.query<{ head: string }>(`SELECT head FROM ${s}.checkpoints WHERE id = $1`, [
      id,
    ]);
    if (rows.length === 0) throw new Error(`no checkpoint ${id} to corrupt`);
    const head = rows[0]!.head;
    if (mode === 'truncate') {
      await client.query(`UPDATE ${s}.chunks SET body = left(body, length(body) / 2) WHERE id = $1`, [head]);
    } else if (mode === 'garbage') {
      await client.query(`UPDATE ${s}.chunks SET body = $2 WHERE id = $1`, [
        head,
        '\u00ff not json at all \u0001',
      ]);
    } else if (mode === 'newer-version') {
      await client.query(`UPDATE ${s}.checkpoints SET format_version = 999 WHERE id = $1`, [id]);
    } else {
      await client.query(
        `UPDATE ${s}.checkpoints SET metadata_text = '{"__proto__":{"polluted":"yes"},' || substr(json_build_object(
            'id', id, 'createdAt', created_at, 'lineageId', lineage_id, 'parentId', parent_id, 'branch', branch,
            'trigger', "trigger", 'entities', entities::json, 'eventCount', event_count)::text, 2)
          WHERE id = $1`,
        [id],
      );
    }
  });
}

/**
 * Registers cleanup after each test of the calling file: the providers passed to `track` are closed,
 * and the schemas of the locations made by `location` dropped.
 */
export function useTemporaryLocations(): {
  track<T extends { close(): Promise<void> }>(provider: T): T;
  location(schema?: string): string;
} {
  const providers: { close(): Promise<void> }[] = [];
  const locations: string[] = [];
  afterEach(async () => {
    for (const provider of providers.splice(0)) await provider.close();
    for (const location of locations.splice(0)) await dropLocation(location);
  });
  return {
    track(provider) {
      providers.push(provider);
      return provider;
    },
    location(schema) {
      const location = temporaryLocation(schema);
      locations.push(location);
      return location;
    },
  };
}
