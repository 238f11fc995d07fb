import { CrewlineError } from '@crewline/events';
import {
  buildCheckpointWrite,
  createTestRun,
  writeTestCheckpoint,
} from '@crewline/provider-testkit/fixtures';
import type pg from 'pg';
import { expect, it } from 'vitest';
import { migrateSchema } from './migrations.js';
import { PostgresProvider } from './postgres-provider.js';
import { migrations, SCHEMA_VERSION } from './schema.js';
import {
  describeWithPostgres,
  temporarySchemaName,
  testServerUrl,
  useTemporaryLocations,
  withServer,
} from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function provider(options: ConstructorParameters<typeof PostgresProvider>[0] = {}): PostgresProvider {
  return temporary.track(new PostgresProvider({ poolSize: 2, ...options }));
}

function freshSchema(): { schema: string; location: string } {
  const schema = temporarySchemaName();
  return { schema, location: temporary.location(schema) };
}

async function schemaExists(schema: string): Promise<boolean> {
  return withServer(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    return (rowCount ?? 0) > 0;
  });
}

describeWithPostgres('schema versions and migrations', () => {
  it('reads never create the schema; the first write creates it and records schema_version', async () => {
    const { schema, location } = freshSchema();
    const reader = provider();
    expect(await reader.list(location)).toEqual([]);
    expect(await reader.latest(location)).toBeUndefined();
    expect(await reader.delete(location, '20260101T000000000-00000000')).toBe(false);
    expect((await reader.prune(location, { keep: 1 })).removed).toEqual([]);
    const notFound = await reader
      .read(location, '20260101T000000000-00000000')
      .catch((error: unknown) => error);
    expect(CrewlineError.hasCode(notFound, 'not_found')).toBe(true);
    expect(await schemaExists(schema)).toBe(false);

    await provider().write(location, buildCheckpointWrite());
    expect(await schemaExists(schema)).toBe(true);
    const rows = await withServer(
      async (client) =>
        (
          await client.query<{ key: string; value: string }>(
            `SELECT key, value FROM "${schema}".crewline_meta ORDER BY key`,
          )
        ).rows,
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { key: 'application', value: 'crewline-checkpoints' },
        { key: 'schema_version', value: String(SCHEMA_VERSION) },
      ]),
    );
    expect((await reader.stats(location))?.schemaVersion).toBe(SCHEMA_VERSION);
  });

  it('refuses a schema written by a newer version with unsupported_version, and changes nothing', async () => {
    const { schema, location } = freshSchema();
    await provider().write(location, buildCheckpointWrite());
    await withServer((client) =>
      client.query(`UPDATE "${schema}".crewline_meta SET value = '99' WHERE key = 'schema_version'`),
    );
    const newer = provider();
    for (const attempt of [
      () => newer.list(location),
      () => newer.write(location, buildCheckpointWrite()),
      () => provider().write(location, buildCheckpointWrite()),
      () =>
        provider().claimLease(location, {
          lineageId: 'run',
          owner: 'o',
          holder: 'h',
          checkpointId: null,
          ttlMs: 1000,
        }),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(CrewlineError.hasCode(error, 'unsupported_version'), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/version 99.*upgrade @crewline\/provider-postgres/);
    }
    const count = await withServer(
      async (client) =>
        (await client.query(`SELECT count(*)::int AS n FROM "${schema}".checkpoints`)).rows[0].n,
    );
    expect(count).toBe(1);
  });

  it("refuses a schema holding another application's table of the same name", async () => {
    const { schema, location } = freshSchema();
    await withServer((client) =>
      client.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".checkpoints (x int)`),
    );
    const error = await provider()
      .write(location, buildCheckpointWrite())
      .catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/not crewline's; point the location at another schema/);
    const listed = await provider()
      .list(location)
      .catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(listed, 'invalid_config')).toBe(true);
  });

  it('migrates once when many providers (as many processes would) write their first checkpoint at once', async () => {
    const { schema, location } = freshSchema();
    const writes = Array.from({ length: 8 }, () => provider().write(location, buildCheckpointWrite()));
    const stored = await Promise.all(writes);
    expect(new Set(stored.map((entry) => entry.id)).size).toBe(8);
    const versions = await withServer(
      async (client) =>
        (await client.query(`SELECT value FROM "${schema}".crewline_meta WHERE key = 'schema_version'`)).rows,
    );
    expect(versions).toEqual([{ value: String(SCHEMA_VERSION) }]);
  });
});

describeWithPostgres('the migration runner', () => {
  it('applies each missing step once, in order, recording the version after each', async () => {
    const { schema, location } = freshSchema();
    await provider().write(location, buildCheckpointWrite());
    const later = [
      ...migrations,
      {
        version: SCHEMA_VERSION + 1,
        statements: (name: string) => `ALTER TABLE "${name}".checkpoints ADD COLUMN note_a text`,
      },
      {
        version: SCHEMA_VERSION + 2,
        statements: (name: string) => `ALTER TABLE "${name}".checkpoints ADD COLUMN note_b text`,
      },
    ];
    const versions = await withServer(async (client) => {
      const asPoolClient = client as unknown as pg.PoolClient;
      const first = await migrateSchema(asPoolClient, schema, location, later);
      // Again: nothing left to apply (an ALTER run twice would fail).
      const second = await migrateSchema(asPoolClient, schema, location, later);
      const recorded = await client.query(
        `SELECT value FROM "${schema}".crewline_meta WHERE key = 'schema_version'`,
      );
      return { first, second, recorded: recorded.rows[0].value };
    });
    expect(versions).toEqual({
      first: SCHEMA_VERSION + 2,
      second: SCHEMA_VERSION + 2,
      recorded: String(SCHEMA_VERSION + 2),
    });
    const error = await provider()
      .list(location)
      .catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'unsupported_version')).toBe(true);
  });
});

describeWithPostgres('version 2', () => {
  it('turns the refs of a version 1 schema into offsets from each node, and its checkpoints read back', async () => {
    const { schema, location } = freshSchema();
    const refs = await withServer(async (client) => {
      const asPoolClient = client as unknown as pg.PoolClient;
      await migrateSchema(asPoolClient, schema, location, migrations.slice(0, 1));
      await client.query(
        `INSERT INTO "${schema}".chunks (id, body, refs) VALUES (10, 'v1', NULL), (11, 'v2', NULL), (200, 'n[10,11]', '{10,11}')`,
      );
      await migrateSchema(asPoolClient, schema, location);
      const { rows } = await client.query<{ id: string; refs: string | null }>(
        `SELECT id, refs FROM "${schema}".chunks ORDER BY id`,
      );
      return rows;
    });
    expect(refs).toEqual([
      { id: '10', refs: null },
      { id: '11', refs: null },
      { id: '200', refs: '190,189' },
    ]);
    const writer = provider();
    const checkpoint = buildCheckpointWrite();
    const stored = await writer.write(location, checkpoint);
    expect(await writer.read(location, stored.id)).toEqual({ text: checkpoint.text() });
  });
});

describeWithPostgres('schemas keep users of one database apart', () => {
  it('two schemas of one database never see each other, and the option names the default schema', async () => {
    const first = freshSchema();
    const second = freshSchema();
    const one = provider({ schema: first.schema });
    const two = provider({ schema: second.schema });
    const server = testServerUrl()!;
    // Same URL, two providers with different default schemas; and the same run id in both.
    const run = createTestRun({ provider: one, location: server });
    const inFirst = await writeTestCheckpoint(run);
    // Another id (its last character changed), so reading it from the first schema finds nothing.
    const otherId = `${inFirst.id.slice(0, -1)}${inFirst.id.endsWith('0') ? '1' : '0'}`;
    const copy = buildCheckpointWrite({ run, metadata: { id: otherId } });
    await two.write(server, copy);
    expect(one.resolveLocation(server)).toBe(first.location.replace(/:[^:@/]*@/, '@'));
    expect((await one.list(server)).map((entry) => entry.id)).toEqual([inFirst.id]);
    expect((await two.list(server)).map((entry) => entry.id)).toEqual([copy.metadata.id]);
    // ?schema= in the location wins over the option.
    expect((await two.list(first.location)).map((entry) => entry.id)).toEqual([inFirst.id]);
    const missing = await one.read(server, copy.metadata.id).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(missing, 'not_found')).toBe(true);
    await one.claimLease(server, {
      lineageId: run.state.lineage.lineageId,
      owner: 'a',
      holder: 'first schema',
      checkpointId: inFirst.id,
      ttlMs: 60_000,
    });
    // The same run id in the other schema is free.
    await two.claimLease(server, {
      lineageId: run.state.lineage.lineageId,
      owner: 'b',
      holder: 'second schema',
      checkpointId: copy.metadata.id,
      ttlMs: 60_000,
    });
    expect((await one.prune(server, { keep: 1 })).removed).toEqual([]);
    await one.delete(server, inFirst.id);
    expect((await two.list(server)).length).toBe(1);
  });
});
