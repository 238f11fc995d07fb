import { CrewlineError } from '@crewline/events';
import { createTestRun, writeTestCheckpoint } from '@crewline/provider-testkit/fixtures';
import { readDocument } from '@crewline/runtime-state';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import {
  describeWithPostgres,
  testServerUrl,
  useTemporaryLocations,
  withServer,
} from './test-support/test-server.js';

/** Collects what is written to stderr (crewline's default log sink) while `body` runs. */
async function capturingStderr<T>(body: () => Promise<T>): Promise<{ result: T; logged: string }> {
  const logged: string[] = [];
  const originalWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (originalWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    return { result: await body(), logged: logged.join('') };
  } finally {
    process.stderr.write = originalWrite;
  }
}

function passwordOf(url: string): string {
  return decodeURIComponent(new URL(url).password);
}

const temporary = useTemporaryLocations();

function provider(): PostgresProvider {
  return temporary.track(new PostgresProvider({ poolSize: 2 }));
}

describeWithPostgres('credentials in the connection string', () => {
  it('the test server needs the password over TCP (so these tests prove it is used)', async () => {
    const url = testServerUrl()!;
    expect(passwordOf(url).length).toBeGreaterThan(0);
    const withoutPassword = new URL(url);
    withoutPassword.password = '';
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    try {
      const location = `${withoutPassword.href}?schema=never_written`;
      const error = await provider()
        .list(location)
        .catch((caught: unknown) => caught);
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/password.*PGPASSWORD/);
      const wrong = new URL(url);
      wrong.password = 'wrong-pw-4711';
      const refused = await provider()
        .list(`${wrong.href}?schema=never_written`)
        .catch((caught: unknown) => caught);
      expect(CrewlineError.hasCode(refused, 'invalid_config'), String(refused)).toBe(true);
      expect((refused as Error).message).toMatch(/refused the password .*; check it/);
      expect(
        JSON.stringify({ message: (refused as Error).message, stack: (refused as Error).stack }),
      ).not.toContain('wrong-pw-4711');
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
    }
  });

  it('never reaches a checkpoint, a listing, a reference, a log line, an error or a stored byte', async () => {
    const url = testServerUrl()!;
    const password = passwordOf(url);
    const location = temporary.location();
    const writer = provider();
    const { result, logged } = await capturingStderr(async () => {
      const resolved = writer.resolveLocation(location);
      const run = createTestRun({ provider: writer, location });
      const first = await writeTestCheckpoint(run);
      const second = await writeTestCheckpoint(run);
      const listing = await writer.list(location);
      const latest = await writer.latest(location);
      const text = await writer.read(location, second.id);
      const document = await readDocument(writer, location, second.id);
      const errors: unknown[] = [];
      errors.push(
        await writer.read(location, '20200101T000000000-00000000').catch((error: unknown) => error),
      );
      errors.push(await writer.list(`${location}&port=1`).catch((error: unknown) => error));
      const unreachable = new URL(url);
      unreachable.port = '1';
      errors.push(await writer.list(`${unreachable.href}?schema=nowhere`).catch((error: unknown) => error));
      errors.push(await writer.prune(location, { keep: 0 }).catch((error: unknown) => error));
      return {
        resolved,
        first,
        second,
        listing,
        latest,
        text,
        document,
        errors,
        stats: await writer.stats(location),
      };
    });
    const everything = JSON.stringify(result, (_key, value: unknown) =>
      value instanceof Error
        ? { message: value.message, stack: value.stack, cause: String(value.cause) }
        : value,
    );
    expect(everything).toContain(result.first.id);
    expect(result.errors.every((error) => CrewlineError.isInstance(error))).toBe(true);
    expect((result.errors[2] as Error).message).toMatch(/cannot reach the Postgres server/);
    expect(everything.includes(password), 'the password appears in an output').toBe(false);
    expect(logged.includes(password), 'the password appears in a log line').toBe(false);
    expect(result.resolved).not.toContain(':' + password);
    expect(result.first.reference.startsWith(result.resolved)).toBe(true);
    // Nothing stored in the server's tables holds it either.
    const stored = await withServer(async (client) => {
      const schema = new URL(result.resolved).searchParams.get('schema')!;
      const tables = await client.query<{ name: string }>(
        'SELECT tablename AS name FROM pg_tables WHERE schemaname = $1',
        [schema],
      );
      let found = 0;
      for (const { name } of tables.rows) {
        const { rows } = await client.query<{ count: string }>(
          `SELECT count(*) FROM "${schema}"."${name}" t WHERE t::text LIKE '%' || $1 || '%'`,
          [password],
        );
        found += Number(rows[0]!.count);
      }
      return { tables: tables.rows.length, found };
    });
    expect(stored.tables).toBeGreaterThan(4);
    expect(stored.found).toBe(0);
  });

  it('a listed reference reads back through parseReference in another provider of the same process', async () => {
    const location = temporary.location();
    const writer = provider();
    const run = createTestRun({ provider: writer, location });
    const stored = await writeTestCheckpoint(run);
    const reference = (await writer.list(location))[0]!.reference;
    expect(reference).not.toContain(passwordOf(testServerUrl()!));
    const reader = provider();
    const parsed = reader.parseReference(reference)!;
    expect(parsed.id).toBe(stored.id);
    const document = await readDocument(reader, parsed.location, parsed.id!);
    expect(document.metadata.id).toBe(stored.id);
  });
});
