// The code of this package's README.md; readme-example.test.ts runs it against the test server.
// #region queue
import { RunQueue, Worker } from '@crewline/worker';
import config from './readme-config.js';

// #endregion queue
/** Runs the README's example against the server at `url`; returns what it printed. */
export async function readmeExample(url: string): Promise<string[]> {
  const printed: string[] = [];
  const console = { log: (line: string) => printed.push(line) };
  // #region queue
  // url: postgres://user@host:5432/database (the password from PGPASSWORD or the URL)
  const worker = new Worker({ location: url, runs: config.runs, concurrency: 4 });
  await worker.start(); // the first worker on a location creates the queue there

  const queue = new RunQueue({ location: url });
  const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' }, idempotencyKey: 'order-17' });
  const [ended] = await queue.waitForEnd([run.id]); // or queue.get(run.id) for progress
  console.log(`${ended?.status} after ${ended?.attempts} attempt(s), ${ended?.tokens.total} tokens`);
  await worker.stop({ handBack: true }); // what SIGTERM should do: hand running runs back
  await queue.close();
  // #endregion queue
  return printed;
}
