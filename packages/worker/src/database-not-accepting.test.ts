import { CrewlineError } from '@crewline/events';
import { describeWithPostgres, testServerUrl, withServer } from '@crewline/test-support/postgres';
import { expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

// Before: 'could not open the run queue ...' (write_failed, the CLI's exit 1) with the server's words only.
describeWithPostgres('a run queue in a database that does not accept connections', () => {
  it('is a configuration error saying so and how to allow them', async () => {
    const database = `noconn_queue_${Date.now()}`;
    await withServer(async (client) => {
      await client.query(`CREATE DATABASE ${database}`);
      await client.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    });
    const url = new URL(testServerUrl()!);
    url.pathname = `/${database}`;
    url.searchParams.set('schema', 'noconn');
    const queue = new RunQueue({ location: url.toString(), poolSize: 1 });
    try {
      const error = await queue.list().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      const { message, details } = error as CrewlineError;
      expect(message).toContain(`the database "${database}" of the run queue postgres://`);
      expect(message).toContain('does not accept connections');
      expect(message).toContain(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
      expect(details?.unreachable).toBeUndefined();
    } finally {
      await queue.close().catch(() => undefined);
      await withServer((client) => client.query(`DROP DATABASE ${database}`));
    }
  });
});
