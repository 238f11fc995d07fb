import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { PostgresProvider } from './postgres-provider.js';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from './test-support/test-server.js';

const providers: PostgresProvider[] = [];
const locations: string[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close();
  for (const location of locations.splice(0)) await dropLocation(location);
});

describeWithPostgres('lease queries on a server that does not answer', () => {
  it('a renewal stuck behind a lock fails within a quarter of the lease, and the next one goes through', async () => {
    const provider = new PostgresProvider({ poolSize: 2 });
    providers.push(provider);
    const location = temporaryLocation();
    locations.push(location);
    const ttlMs = 6_000;
    const token = { lineageId: 'partitioned', owner: 'holder' };
    await provider.claimLease(location, { ...token, holder: 'holder', checkpointId: null, ttlMs });
    const schema = parseLocation(location, 'crewline').schema;

    const outcome = await withServer(async (blocker) => {
      // A transaction that holds the lease row: the renewal's UPDATE waits for it, as it would for
      // a server that stopped answering.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT * FROM "${schema}".leases WHERE lineage_id = $1 FOR UPDATE`, [
        token.lineageId,
      ]);
      const startedAt = performance.now();
      const renewal = provider.renewLease(location, token, ttlMs).then(
        () => 'renewed' as const,
        () => 'failed' as const,
      );
      const result = await Promise.race([renewal, sleep(ttlMs).then(() => 'still waiting' as const)]);
      const elapsedMs = performance.now() - startedAt;
      await blocker.query('ROLLBACK');
      return { result, elapsedMs };
    });

    expect(outcome.result).toBe('failed');
    expect(outcome.elapsedMs).toBeLessThan(ttlMs / 3);
    const renewed = await provider.renewLease(location, token, ttlMs);
    expect(renewed.owner).toBe(token.owner);
  });
});
