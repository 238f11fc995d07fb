// A worker process of the end-to-end test, run as a user's worker would run (compiled by
// bundle-worker-child.ts). Usage: node worker-child.mjs <options as JSON>
// Prints (synchronously, so a SIGKILL loses nothing printed): "ready", "call <runId> <task> <at>"
// when a model call starts (`at` is Date.now(), the clock of the holds' `at`, so the throughput
// bench measures overheads on one clock), "hold <JSON HoldChange>" for every hold taken and given
// up, and "stopped" after a SIGTERM handed its runs back.
import { writeSync } from 'node:fs';
import { Worker } from '../worker.js';
import { reportCrewFactory } from './report-crew.js';

export interface WorkerChildOptions {
  location: string;
  callLog: string;
  concurrency: number;
  leaseTtlMs: number;
  latencyMs: number;
  /** The name the report crew is registered under. Default `report`. */
  name?: string;
}

function print(line: string): void {
  writeSync(1, `${line}\n`);
}

const options = JSON.parse(process.argv[2] ?? '{}') as WorkerChildOptions;
const worker = new Worker({
  location: options.location,
  runs: {
    crews: {
      [options.name ?? 'report']: reportCrewFactory({
        callLog: options.callLog,
        latencyMs: options.latencyMs,
        onCall: (runId, task) => print(`call ${runId} ${task} ${Date.now()}`),
      }),
    },
  },
  concurrency: options.concurrency,
  leaseTtlMs: options.leaseTtlMs,
  pollIntervalMs: 200,
  retryDelayMs: 500,
  onHold: (change) => print(`hold ${JSON.stringify(change)}`),
});
await worker.start();
print('ready');
await worker.stopOnSignal(['SIGTERM']);
print('stopped');
process.exit(0);
