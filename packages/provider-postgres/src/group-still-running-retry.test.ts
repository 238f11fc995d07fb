// A group whose connection was lost while its statement still ran on the server (the client's socket
// closed, the server's backend waiting on a lock): the one more attempt looks its ids up before the
// first attempt commits, finds none and sends the group again, which waits for the first attempt's
// rows and fails on them once it committed; the group is stored once and must be reported stored.
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { afterEach, expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { connectionLost, interceptNextWrite } from './test-support/next-write.js';
import { RecordingProvider } from './test-support/recording-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

/** Sends the next statement calling crewline_write, then closes the socket at once (no answer awaited). */
function loseTheConnectionRightAfterSending(): { restore(): void } {
  return interceptNextWrite((client, send) => {
    send().catch(() => undefined);
    // Let the statement reach the server's socket buffer, then close ours.
    return new Promise((resolve) => setTimeout(resolve, 50)).then(() => connectionLost(client));
  });
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
