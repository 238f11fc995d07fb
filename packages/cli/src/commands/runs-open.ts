import { cliError } from '../core/cli-error.js';

type RunRecord = import('@crewline/worker').RunRecord;

/** The location part of a `postgres-url#id` reference. */
export function checkpointLocation(reference: string): string {
  const hash = reference.lastIndexOf('#');
  return hash < 0 ? reference : reference.slice(0, hash);
}

/**
 * `crewline runs open RUN`: the arguments of the checkpoint browser on the run's checkpoints — the
 * location its references name, narrowed to its lineage. References carry no password; the queue's
 * URL may, and then lends it (else PGPASSWORD gives it, as to every command).
 */
export function browserArguments(record: RunRecord, queueUrl: string, command: string): string[] {
  if (record.lineageId === null || record.lastCheckpoint === null) {
    throw cliError(
      'not_found',
      `run ${record.id} has written no checkpoint yet (${record.status}); open it once a worker has started it (${command} runs show ${record.id})`,
    );
  }
  const location = new URL(checkpointLocation(record.lastCheckpoint));
  const queue = new URL(queueUrl);
  if (location.password === '' && queue.password !== '' && queue.host === location.host) {
    location.username = queue.username;
    location.password = queue.password;
  }
  return ['--location', location.href, '--lineage', record.lineageId];
}
