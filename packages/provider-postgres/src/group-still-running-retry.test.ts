// A group whose connection was lost while its statement still ran on the server (the client's socket
// closed, the server's backend waiting on a lock): the one more attempt looks its ids up before the
// first attempt commits, finds none and sends the group again, which waits for the first attempt's
// rows and fails on them once it committed; the group is stored once and must be reported stored.
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import type pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { SocketClosingClient, socketOf } from './socket-closing-client.js';
import { RecordingProvider } from './test-support/recording-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

/** Sends the next statement calling crewline_write, then closes the socket at once (no answer awaited). */
function loseTheConnectionRightAfterSending(): { restore(): void } {
  const prototype = SocketClosingClient.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let armed = true;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    if (!armed || !text.includes('crewline_write')) return original.apply(this, args);
    armed = false;
    (original.apply(this, args) as Promise<unknown>).catch(() => undefined);
    // Let the statement reach the server's socket buffer, then close ours.
    return new Promise((_, reject) =>
      setTimeout(() => {
        socketOf(this)?.destroy();
        reject(new Error('Connection terminated unexpectedly'));
      }, 50),
    );
  };
  return {
    restore: () => {
      prototype.query = original;
    },
  };
}

describeWithPostgres('a group still running on the server when its connection was lost', () => {
  let lost: { restore(): void } | undefined;
  afterEach(() => lost?.restore());

  it('is stored once and reported stored, not as a conflict', async () => {
    const provider = temporary.track(new RecordingProvider());
    const location = provider.resolveLocation(temporary.location());
    const schema = parseLocation(location, 'crewline').schema;
    const run = growingRun({ tasks: 4, outputBytes: 200 });
    const [root] = nextWrites(run, 1);
    await provider.write(location, root!);
    const group = nextWrites(run, 3, root);

    const outcome = await withServer(async (blocker) => {
      // Inserts wait (the first attempt past the 1 s pause); the one more attempt's SELECT does not.
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${schema}".checkpoints IN SHARE MODE`);
      lost = loseTheConnectionRightAfterSending();
      const writing = provider.writeBatch(location, group).then(
        (stored) => stored.map((checkpoint) => checkpoint.id),
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await blocker.query('COMMIT');
      return writing;
    });

    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      [root, ...group].map((write) => write!.metadata.id),
    );
    expect(outcome).toEqual(group.map((write) => write.metadata.id));
  });
});
