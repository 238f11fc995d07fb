import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  serverPassword,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '@crewline/test-support/postgres';
import { expect, it } from 'vitest';
import { RunQueue } from '../run-queue.js';
import { startWorkerChild } from '../test-support/children.js';

/** How long the server keeps ending every connection of the worker, and how often. */
const stormMs = 1500;
const everyMs = 25;

describeWithPostgres('a worker process whose connections the server ends (a restart, a failover)', () => {
  // Before: a connection ended while a checkpoint write or a queue transaction had it checked out
  // emitted an 'error' event nobody listened for, and the worker exited 1 ("Emitted 'error' event on
  // SocketClosingClient ... Connection terminated unexpectedly"), charging its runs a failure.
  it('keeps running, and its runs complete', { timeout: 90_000 }, async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const url = new URL(location);
    url.password = '';
    const callLog = join(mkdtempSync(join(tmpdir(), 'crewline-connections-ended-')), 'calls.log');
    const child = startWorkerChild(
      { location: url.href, callLog, concurrency: 2, leaseTtlMs: 3000, latencyMs: 150 },
      { PGPASSWORD: serverPassword(testServerUrl()!) },
    );
    try {
      await child.waitFor(/^ready$/);
      const runs = [];
      for (const topic of ['tides', 'kelp'])
        runs.push((await queue.enqueue('report', { inputs: { topic } })).run);
      while (child.lines.filter((line) => line.startsWith('call ')).length < 2) await sleep(5);

      // Every client connection but this one ends, over and over, as a server restart or a failover
      // ends them: with calls of 150 ms, some end while a checkpoint write or a claim is in flight.
      let ended = 0;
      await withServer(async (killer) => {
        for (const stopAt = Date.now() + stormMs; Date.now() < stopAt; ) {
          const { rowCount } = await killer.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
          );
          ended += rowCount ?? 0;
          await sleep(everyMs);
        }
      });
      expect(ended).toBeGreaterThan(0);

      const outcome = await Promise.race([child.exit, sleep(2000, 'running' as const)]);
      expect(outcome, `the worker exited: ${child.stderr().split('\n').slice(-12).join('\n')}`).toBe(
        'running',
      );
      // The queue's own connections were ended too: its next query opens new ones.
      let finished: Awaited<ReturnType<RunQueue['waitForEnd']>> | undefined;
      for (let attempt = 0; finished === undefined && attempt < 5; attempt += 1) {
        finished = await queue
          .waitForEnd(
            runs.map((run) => run.id),
            { timeoutMs: 60_000 },
          )
          .catch((error: unknown) => {
            if (String(error).includes('did not end')) throw error;
            return undefined;
          });
      }
      expect(finished?.map((run) => run.status)).toEqual(['completed', 'completed']);
    } finally {
      child.process.kill('SIGTERM');
      await child.exit;
      await queue.close();
    }
  });
});
