import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { describeWithPostgres, testServerUrl, withServer } from './test-support/test-server.js';

// Before (since 1d3b562): FATAL 55000 counted as a lost connection: 'the connection ... was lost ...
// try again' (the CLI's exit 7), which no retry fixes.
describeWithPostgres('a database that does not accept connections', () => {
  it('is a configuration error saying so and how to allow them, not a lost connection', async () => {
    const database = `noconn_${Date.now()}`;
    await withServer(async (client) => {
      await client.query(`CREATE DATABASE ${database}`);
      await client.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    });
    const url = new URL(testServerUrl()!);
    url.pathname = `/${database}`;
    url.searchParams.set('schema', 'noconn');
    const provider = new PostgresProvider({ poolSize: 1 });
    try {
      const error = await provider.read(url.toString(), '20260101T000000000-00000000').then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      const { message, details } = error as CrewlineError;
      expect(message).toContain(`the database "${database}" of postgres://`);
      expect(message).toContain('does not accept connections');
      expect(message).toContain(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
      expect(message).not.toContain('was lost');
      expect(details?.unreachable).toBeUndefined();
    } finally {
      await provider.close();
      await withServer((client) => client.query(`DROP DATABASE ${database}`));
    }
  });
});
