import { CrewlineError } from '@crewline/events';
import { describeWithPostgres, testServerUrl } from '@crewline/test-support/postgres';
import { expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

/** The TCP sockets this process has open (pg's connections to the server among them). */
function openSockets(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'TCPSocketWrap').length;
}

// pg reported its own "SASL: ... client password must be a string" as the server's refusal, and kept
// the login's socket open: the server waited for an answer for its authentication_timeout (60 s),
// and the process that asked could not end until then.
describeWithPostgres('a queue URL without the password the server asks for', () => {
  it('says so at once and leaves no connection open', async () => {
    const url = new URL(testServerUrl()!);
    url.password = '';
    url.searchParams.set('schema', 'queue_login');
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    const before = openSockets();
    const queue = new RunQueue({ location: url.href });
    try {
      const error = await queue.list().catch((caught: unknown) => caught);
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      expect((error as Error).message).toContain('asks for a password and none was given');
      expect((error as Error).message).toContain('PGPASSWORD');
      expect((error as Error).message).not.toContain('SASL');
      // The socket's handle goes once its close is processed, within a few turns; the server would
      // have kept it for its authentication_timeout (60 s).
      for (let turn = 0; turn < 50 && openSockets() > before; turn += 1)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(openSockets()).toBe(before);
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
      await queue.close();
    }
  });
});
