import type { StoredCheckpoint } from '../provider.js';
import type { PreparedWrite, WriteOutcomes } from './write-outcomes.js';
import type { WriteQueue } from './write-queue.js';

/**
 * Queues `prepared` for a write in the background (`RuntimeState.writeCheckpoint`), in order after
 * the checkpoints queued before it (see WriteQueue); the promise rejects on failure. The write, and
 * a fork's origin written beside it, count as work of the run in flight until they end.
 */
export function writeQueued(
  prepared: PreparedWrite,
  queue: WriteQueue,
  outcomes: WriteOutcomes,
): Promise<StoredCheckpoint> {
  const { provider, resolvedLocation, write, companion, succeed, fail } = prepared;
  let companionWritten: Promise<void>[] | undefined;
  const writing = new Promise<StoredCheckpoint>((resolve, reject) => {
    // Reported as soon as the write ends, so that completions are reported in the order the writes
    // end (events, lastStored), and once: a write in flight may be written again by a strict
    // checkpoint (see WriteQueue.writeAheadSync) and end twice.
    let settled = false;
    const settle = (report: () => StoredCheckpoint) => {
      if (settled) return;
      settled = true;
      try {
        resolve(report());
      } catch (error) {
        reject(error);
      }
    };
    // A fork's origin is queued right before its first checkpoint and once more right after it (see
    // ForkOrigin), each tracked like a checkpoint: the run ends (and kickoff returns) once written.
    let copyFailed = false;
    const queueCompanion = (report: () => boolean): Promise<void> =>
      new Promise<void>((written) => {
        queue.enqueue({
          provider,
          location: resolvedLocation,
          write: companion!,
          companion: true,
          resolve: () => written(),
          reject: (error) => {
            if (report()) outcomes.companionFailed(companion!, resolvedLocation, error);
            copyFailed = true;
            written();
          },
        });
      });
    if (companion !== undefined) companionWritten = [queueCompanion(() => true)];
    queue.enqueue({
      provider,
      location: resolvedLocation,
      write,
      resolve: (stored) => settle(() => succeed(stored)),
      reject: (error) => settle(() => fail(error)),
    });
    if (companion !== undefined) companionWritten?.push(queueCompanion(() => !copyFailed));
  });
  outcomes.track(writing.catch(() => undefined));
  for (const written of companionWritten ?? []) outcomes.track(written);
  return writing;
}
