import { basename } from 'node:path';
import { findProjectConfigFile } from '@crewline/runtime/internal';
import { parseCommandArguments, parseCount } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { cliError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { jsonLine } from '../core/json-output.js';
import { loadProject } from '../core/project-config.js';
import { loadWorkerPackage, queueLocation } from './worker-package.js';

/**
 * `crewline worker --concurrency N`: takes runs from the queue until SIGTERM or SIGINT, then hands
 * the runs it holds back (each lets its model call in flight finish and checkpoints it) and exits 0.
 */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseCommandArguments(
    'worker',
    args,
    {
      location: { type: 'string' },
      concurrency: { type: 'string' },
      'lease-ttl-ms': { type: 'string' },
      json: { type: 'boolean' },
    },
    0,
    commandName(context.env, context.cwd),
  );
  const location = queueLocation(values.location, context.env, 'worker');
  const concurrency =
    values.concurrency === undefined ? 1 : parseCount('--concurrency', values.concurrency, 1);
  const leaseTtlMs =
    values['lease-ttl-ms'] === undefined ? undefined : parseCount('--lease-ttl-ms', values['lease-ttl-ms']);
  const config = (await loadProject(context.cwd)) as { runs?: unknown } | undefined;
  if (config === undefined) {
    throw cliError(
      'invalid_config',
      // The README ships in the npm package; the repository's docs/ do not.
      `no crewline.config.ts in ${context.cwd}: create one that registers your crews (see "Two commands" in the README of @crewline/worker, node_modules/@crewline/worker/README.md)`,
    );
  }
  if (config.runs === undefined) {
    const file = basename(findProjectConfigFile(context.cwd) ?? 'crewline.config.ts');
    throw cliError(
      'invalid_config',
      `${file} in ${context.cwd} registers no runs: export them, e.g. export default { ...defineConfig({ models }), runs: defineRuns({ crews: { report: (run) => new Crew(...) } }) }`,
    );
  }
  const { Worker } = await loadWorkerPackage();
  const say = (line: Record<string, unknown>, text: string) =>
    context.stdout.write(values.json ? jsonLine(line) : `${text}\n`);
  const worker = new Worker({
    location,
    runs: config.runs as ConstructorParameters<typeof Worker>[0]['runs'],
    concurrency,
    ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
    onHold: (change) =>
      say(
        { event: change.change, runId: change.runId, attempt: change.attempt, outcome: change.outcome },
        change.change === 'claimed'
          ? `took run ${change.runId} (attempt ${change.attempt})`
          : `run ${change.runId}: ${change.outcome}`,
      ),
  });
  try {
    await worker.start();
  } catch (error) {
    // A start that failed part-way (the schema made, pg-boss's queue not) leaves connections open
    // that would keep the process alive after the error is reported.
    await worker.stop().catch(() => undefined);
    throw error;
  }
  say(
    { event: 'started', worker: worker.id, concurrency },
    `worker ${worker.id} taking runs (concurrency ${concurrency}); SIGTERM or Ctrl+C hands its runs back`,
  );
  // Runs in flight let their model call finish, checkpoint it and go back to the queue. The worker
  // owns the signal listeners; a second listener here would answer the same signal twice.
  await worker.stopOnSignal(['SIGTERM', 'SIGINT'], {
    onSignal: (signal, runIds) =>
      say({ event: 'stopping', signal, runs: runIds }, `${signal}: handing back ${runIds.length} run(s)`),
  });
  say({ event: 'stopped' }, 'stopped');
  return 0;
}
