import { isDeepStrictEqual } from 'node:util';
import { describeModelCost, describeRunCost, redactSecrets } from '@crewline/runtime-state';
import { registerInputSecrets, shellWord } from '@crewline/runtime-state/internal';
import { parseAssignments, parseCommandArguments, parseCount } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { formatColumns, formatTime } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { modelPricesOf } from '../core/model-prices.js';
import { runLimitOptions } from './run-limit-options.js';
import { checkEnqueue } from './runs-enqueue.js';
import { forkOptions, forkRefusalInCliWords } from './runs-fork.js';
import { browserArguments } from './runs-open.js';
import { questionLines, resumeAnswer } from './runs-resume.js';
import { loadWorkerPackage, queueLocation } from './worker-package.js';

type RunRecord = import('@crewline/worker').RunRecord;
type RunProgress = import('@crewline/worker').RunProgress;

const subcommands = ['list', 'show', 'open', 'cancel', 'enqueue', 'fork', 'resume'] as const;
const endedStatuses: readonly string[] = ['completed', 'failed', 'cancelled'];

/** `crewline runs list|show|open|cancel|enqueue|fork|resume`: the queue of runs that workers take. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const [subcommand, ...rest] = args;
  if (!subcommands.includes(subcommand as (typeof subcommands)[number])) {
    const { nearestName } = await import('@crewline/runtime-state/internal');
    const nearest = subcommand === undefined ? undefined : nearestName(subcommand, subcommands);
    const command = commandName(context.env, context.cwd);
    throw usageError(
      `${command} runs needs one of ${subcommands.join(', ')}${nearest === undefined ? '' : ` (did you mean ${nearest}?)`}; run \`${command} runs --help\``,
    );
  }
  const command = commandName(context.env, context.cwd);
  const { values, positionals } = parseCommandArguments(
    `runs ${subcommand}`,
    rest,
    {
      location: { type: 'string' },
      json: { type: 'boolean' },
      status: { type: 'string' },
      limit: { type: 'string' },
      input: { type: 'string', multiple: true },
      'set-output': { type: 'string', multiple: true },
      'rerun-from': { type: 'string' },
      'idempotency-key': { type: 'string' },
      priority: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'max-attempts': { type: 'string' },
      answer: { type: 'string' },
      create: { type: 'boolean' },
    },
    1,
    command,
  );
  const { RunQueue } = await loadWorkerPackage();
  const location = queueLocation(values.location, context.env, `runs ${subcommand}`);
  // `show` prices the run's tokens with the project's modelPrices; other subcommands need no config.
  if (values.create && subcommand !== 'enqueue')
    throw usageError(`--create is an option of ${command} runs enqueue, not of runs ${subcommand}`);
  // Only a worker creates a queue, unless `enqueue --create` is told to: a misspelt ?schema= is refused.
  const queue = new RunQueue({
    location,
    ...(subcommand === 'show' ? { modelPrices: await modelPricesOf(context) } : {}),
    ...(values.create ? { create: true } : {}),
  });
  // A run's inputs are stored as given (its worker needs the real values), so every document printed
  // goes through the redaction a checkpoint of the run gets: `checkpoint info` and this agree.
  const print = (json: Record<string, unknown>, text: string) =>
    context.stdout.write(values.json ? jsonDocument(redactSecrets(json)) : `${text}\n`);
  const target = () => {
    const id = positionals[0];
    if (id === undefined || id.trim() === '')
      throw usageError(`${command} runs ${subcommand} needs a run id; list them with ${command} runs list`);
    return id;
  };
  // A unique start of the id is enough, as in `runs list`'s first column.
  const runId = async () => (await queue.require(target())).id;
  try {
    if (subcommand === 'list') {
      const runs = await queue.list({
        ...(values.status !== undefined ? { status: values.status as RunRecord['status'] } : {}),
        ...(values.limit !== undefined ? { limit: parseCount('--limit', values.limit, 1) } : {}),
      });
      // The JSON holds each run's output: see `show` (review RF-3).
      for (const record of runs) registerInputSecrets(record.inputs);
      const rows = [
        ['RUN', 'NAME', 'STATUS', 'ATTEMPTS', 'TASK', 'TOKENS', 'CREATED'],
        ...runs.map((record) => [
          record.id,
          record.name,
          record.status,
          String(record.attempts),
          record.currentTask ?? '-',
          String(record.tokens.total),
          formatTime(record.createdAt.toISOString()),
        ]),
      ];
      // Why a queued run is not taken, under the table: a column would be empty for nearly every run.
      const waiting = runs.flatMap((record) => {
        const reason = waitingReason(record);
        return reason === undefined ? [] : [`run ${record.id}: ${reason}`];
      });
      print(
        { location: queue.location, runs },
        runs.length === 0
          ? `No ${values.status === undefined ? '' : `${values.status} `}runs in ${queue.location}`
          : [...formatColumns(rows), ...(waiting.length > 0 ? ['', ...waiting] : [])].join('\n'),
      );
      return 0;
    }
    if (subcommand === 'show') {
      const record = await queue.require(target());
      // From the run's checkpoints: exact even when its worker died before reporting.
      const progress = await queue.progress(record.id);
      // This process never ran the run: the password of an address input, which the worker's run
      // redacted by value, is registered here too, or its output would show it bare (review RF-3).
      registerInputSecrets(record.inputs);
      print({ ...record, progress }, describe(redactSecrets(record), progress, command));
      return 0;
    }
    if (subcommand === 'open') {
      const browserArgs = browserArguments(await queue.require(target()), location, command);
      await queue.close();
      const browse = await import('./browse.js');
      return await browse.run(browserArgs, context);
    }
    if (subcommand === 'fork') {
      const record = await queue.fork(await runId(), forkOptions(values, command)).catch((error: unknown) => {
        throw forkRefusalInCliWords(error, command);
      });
      print(
        { run: record },
        `queued run ${record.id} (${record.name}), a fork of run ${record.forkOf} from checkpoint ${record.forkFrom}`,
      );
      return 0;
    }
    if (subcommand === 'resume') {
      const id = await runId();
      const record = await queue.resume(id, { humanInput: resumeAnswer(values, id, command) });
      print(
        { run: record },
        `run ${record.id}: queued with the answer; a worker continues it from the checkpoint it paused at`,
      );
      return 0;
    }
    if (subcommand === 'cancel') {
      // Cancelling a run that has ended changes nothing and is no error (exit 0): the run is not running.
      const current = await queue.require(target());
      const record = endedStatuses.includes(current.status) ? current : await queue.cancel(current.id);
      const cancelled = !endedStatuses.includes(current.status) && record.status === 'cancelled';
      print(
        { ...record, cancelled },
        cancelled
          ? `run ${record.id}: cancelled`
          : `run ${record.id} already ${record.status}; nothing cancelled`,
      );
      return 0;
    }
    const name = positionals[0];
    if (name === undefined)
      throw usageError(`${command} runs enqueue needs the registered name of a crew or flow`);
    const inputs = parseAssignments('--input', values.input) ?? {};
    const warning = await checkEnqueue(name, inputs, context.cwd, command);
    const result = await queue.enqueue(name, {
      inputs,
      ...runLimitOptions(values),
    });
    if (warning !== undefined) context.stderr.write(`${warning} ${result.run.id}\n`);
    print(
      { created: result.created, run: result.run },
      result.created
        ? `queued run ${result.run.id} (${name})`
        : `run ${result.run.id} already exists for that idempotency key (${result.run.status})${
            isDeepStrictEqual(result.run.inputs, inputs)
              ? ''
              : '; it keeps its own inputs: the ones given here were not used'
          }`,
    );
    return 0;
  } finally {
    await queue.close();
  }
}

/**
 * Attempts and the failures that count toward the run's limit. A run failed for good by a reason no
 * retry fixes (a timeout) counted none: "failed 0 of at most 5" beside status failed read as a
 * contradiction (deploy trial).
 */
export function describeAttempts(
  record: Pick<RunRecord, 'attempts' | 'failures' | 'maxAttempts' | 'status'>,
): string {
  const counted = `${record.failures} failed of at most ${record.maxAttempts} before the run fails`;
  if (record.status === 'failed' && record.failures < record.maxAttempts)
    return `${record.attempts} (failed for good, not retried: see error; ${counted})`;
  return `${record.attempts} (${counted})`;
}

function describe(record: RunRecord, progress: RunProgress, command: string): string {
  // The newest checkpoint of the run's lineage: the row keeps what the last renewal wrote, which a
  // cancel mid-task leaves behind.
  const lastCheckpoint = progress.lastCheckpoint ?? record.lastCheckpoint;
  const lines = [
    `run        ${record.id}`,
    `name       ${record.name}`,
    `status     ${[record.status, waitingReason(record)].filter(Boolean).join(', ')}`,
    `attempts   ${describeAttempts(record)}`,
    `worker     ${record.worker ?? '-'}`,
    `task       ${progress.currentTask ?? record.currentTask ?? '-'}`,
    `progress   ${progress.beforeFork === null ? '' : 'this run: '}${progress.modelCalls} model call(s) checkpointed in ${progress.checkpoints} checkpoint(s): ${progress.tokens.total} tokens (${progress.tokens.input} in, ${progress.tokens.output} out)`,
    `tokens     ${record.tokens.total} (${record.tokens.input} in, ${record.tokens.output} out) reported by workers, failed calls included`,
    `cost       ${progress.beforeFork === null ? '' : 'this run: '}${describeRunCost(progress.cost)}`,
    ...progress.cost.models.map((model) => `           ${describeModelCost(model)}`),
    ...forkedFromLines(progress),
    `lineage    ${record.lineageId ?? '-'}`,
    `checkpoint ${lastCheckpoint ?? '-'}`,
    `inputs     ${JSON.stringify(record.inputs)}`,
    `created    ${formatTime(record.createdAt.toISOString())}`,
  ];
  if (record.forkOf !== null) lines.push(`fork of    ${record.forkOf} (from ${record.forkFrom})`);
  // A run that completed after a failed attempt keeps that attempt's error: say whose it is.
  if (record.error)
    lines.push(
      record.status === 'completed'
        ? `error      (of an earlier attempt, retried) ${record.error}`
        : `error      ${record.error}`,
    );
  lines.push(...questionLines(record, command));
  if (lastCheckpoint !== null) {
    // The run's checkpoints in the inspector and the browser, as commands to copy (PGPASSWORD gives
    // the password, which no reference carries).
    lines.push(`inspect    ${command} checkpoint info ${shellWord(lastCheckpoint)}`);
    lines.push(`browse     ${command} runs open ${record.id}`);
  }
  if (record.output !== null) lines.push('', record.output);
  return lines.join('\n');
}

/**
 * Why a queued run waits, when a worker handed it back for want of its name: a worker that does not
 * register it never fails it, so without this line the run would just look stuck.
 */
function waitingReason(record: RunRecord): string | undefined {
  const passedOver = record.passedOver;
  if (record.status !== 'queued' || passedOver === null) return undefined;
  const registered = passedOver.registered.map((name) => `"${name}"`).join(', ') || 'nothing';
  return `waiting for a worker that registers "${record.name}" (${passedOver.worker} registers ${registered}; handed back ${passedOver.times} time(s), last at ${formatTime(passedOver.at.toISOString())})`;
}

/**
 * A fork's checkpoints carry the history of the run it was forked from: those calls are that run's
 * (its own `runs show` counts them), so they are shown apart, never added to this run's cost.
 */
function forkedFromLines(progress: RunProgress): string[] {
  const before = progress.beforeFork;
  if (before === null) return [];
  const calls = progress.modelCalls + before.modelCalls;
  const tokens = progress.tokens.total + before.tokens.total;
  return [
    `inherited  ${before.modelCalls} model call(s), ${before.tokens.total} tokens, cost ${describeRunCost(before.cost)}: run ${before.runId ?? '?'}'s, up to the checkpoint this run was forked from; not counted above (with them: ${calls} model call(s), ${tokens} tokens)`,
  ];
}
