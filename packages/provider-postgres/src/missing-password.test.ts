import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import { describeWithPostgres, testServerUrl } from './test-support/test-server.js';

/** The TCP sockets this process has open (pg's connections to the server among them). */
function openSockets(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'TCPSocketWrap').length;
}

// The refusal was said at once, but pg kept the login's socket open: the server waited for an answer
// for its authentication_timeout (60 s), and `crewline checkpoint list` could not end until then.
describeWithPostgres('a URL without the password the server asks for', () => {
  it('is refused at once and leaves no connection open', async () => {
    const url = new URL(testServerUrl()!);
    url.password = '';
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    const before = openSockets();
    const provider = new PostgresProvider({ poolSize: 2 });
    try {
      const error = await provider
        .list(`${url.href}?schema=never_written`)
        .catch((caught: unknown) => caught);
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      expect((error as Error).message).toContain('asks for a password and none was given');
      // The socket's handle goes once its close is processed, within a few turns.
      for (let turn = 0; turn < 50 && openSockets() > before; turn += 1)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(openSockets()).toBe(before);
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
      await provider.close();
    }
  });
});
