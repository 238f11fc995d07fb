// The markdown report of the crash trials.
import { cpus, loadavg } from 'node:os';
import type { ProviderName } from './storage-check.js';
import { type TrialResult, trialFailed } from './trial.js';

export interface ProviderSummary {
  provider: ProviderName;
  results: TrialResult[];
  /** Median wall time of the uninterrupted runs made first, spawn to exit. */
  referenceMs: number;
  /** Checkpoints an uninterrupted run writes. */
  referenceCheckpoints: number;
  /** The run lengths the kill delays were drawn against, one per trial. */
  runLengthsMs: number[];
  /** Wall time of all of this provider's trials (the uninterrupted runs included). */
  wallMs: number;
  /** Trial directories kept because the trial failed. */
  kept: string[];
}

export interface ReportContext {
  command: string;
  seed: number;
  latencyMs: number;
  concurrency: number;
  loadBefore: number;
  childStart: string;
}

const providerLabel: Record<ProviderName, string> = { json: 'JsonProvider', sqlite: 'SqliteProvider' };

function count(results: readonly TrialResult[], predicate: (result: TrialResult) => boolean): number {
  return results.filter(predicate).length;
}

function sum(results: readonly TrialResult[], value: (result: TrialResult) => number): number {
  return results.reduce((total, result) => total + value(result), 0);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** True when every bar of SPEC §8 "Crash" holds for these trials. */
export function barMet(results: readonly TrialResult[]): boolean {
  return (
    results.every((result) => result.unresumable === undefined) &&
    sum(results, (result) => result.torn) === 0 &&
    results.every((result) => result.outputIdentical) &&
    sum(results, (result) => result.calls.repeated.length) === 0
  );
}

function positions(calls: readonly { taskIndex: number; turn: number }[]): string {
  return calls.map((call) => `task ${call.taskIndex} turn ${call.turn}`).join(', ');
}

/** One line per failed trial: everything needed to look at it again. */
function failureLine(result: TrialResult, kept: string | undefined): string {
  const what = [
    result.unresumable !== undefined ? `unresumable (${result.unresumable})` : '',
    ...result.check.torn.map((torn) => `torn: ${torn.reference}: ${torn.error}`),
    result.check.integrity !== undefined && result.check.integrity !== 'ok'
      ? `integrity_check: ${result.check.integrity}`
      : '',
    result.mismatch ?? '',
    result.calls.repeated.length > 0
      ? `repeated checkpointed calls: ${positions(result.calls.repeated)}`
      : '',
    result.calls.repeatedByEvents.length > 0
      ? `calls made again whose llm_call_completed was checkpointed: ${positions(result.calls.repeatedByEvents)}`
      : '',
    result.calls.repeatedByPosition.length > 0
      ? `calls made again at a checkpointed position: ${positions(result.calls.repeatedByPosition)}`
      : '',
    ...result.anomalies,
  ].filter((part) => part !== '');
  const moment =
    result.killedAtMs !== undefined
      ? `killed at ${result.killedAtMs.toFixed(0)} ms`
      : 'ended before the kill';
  return `- ${providerLabel[result.provider]} trial ${result.index}: delay ${result.delayMs.toFixed(1)} ms (${moment}${result.insideWrite ? ', inside a checkpoint write' : ''}), ${result.checkpointsAtKill} checkpoints left, resumed with ${result.resumeHow}: ${what.join('; ')}${kept ? ` — files kept in \`${kept}\`` : ''}`;
}

/** Trials by how far the run had got when it was killed: checkpoints left, in quarters of a run. */
function progressRow({ provider, results, referenceCheckpoints }: ProviderSummary): string {
  const quarter = referenceCheckpoints / 4;
  const cells = [
    count(results, (result) => result.checkpointsAtKill === 0),
    ...[0, 1, 2, 3].map((index) =>
      count(
        results,
        (result) =>
          !result.finishedBeforeKill &&
          result.checkpointsAtKill > 0 &&
          result.checkpointsAtKill > index * quarter &&
          (result.checkpointsAtKill <= (index + 1) * quarter || index === 3),
      ),
    ),
    count(results, (result) => result.finishedBeforeKill),
  ];
  return `| ${providerLabel[provider]} | ${cells.join(' | ')} |`;
}

function detailRow({ provider, results, referenceMs, runLengthsMs }: ProviderSummary): string {
  const shortest = Math.min(...runLengthsMs);
  const longest = Math.max(...runLengthsMs);
  const resumed = (how: TrialResult['resumeHow']) =>
    count(results, (result) => result.checkpointsAtKill > 0 && result.resumeHow === how);
  return `| ${providerLabel[provider]} | ${referenceMs.toFixed(0)} ms | ${shortest.toFixed(0)}–${longest.toFixed(0)} ms | ${count(results, (result) => result.insideWrite)} | ${provider === 'json' ? sum(results, (result) => result.check.tempFiles) : '-'} | ${sum(results, (result) => result.calls.checkpointed)} | ${sum(results, (result) => result.calls.remade)} | ${sum(results, (result) => result.calls.repeatedByEvents.length)} | ${sum(results, (result) => result.calls.repeatedByPosition.length)} | ${resumed('continue')} / ${resumed('rebuild')} |`;
}

/** The whole report as markdown. Its first table holds the SPEC §8 figures. */
export function renderReport(summaries: readonly ProviderSummary[], context: ReportContext): string {
  const barRows = summaries.map(({ provider, results, wallMs }) => {
    const trials = results.length;
    return `| ${providerLabel[provider]} | ${trials} | ${count(results, (result) => result.checkpointsAtKill === 0)} | ${count(results, (result) => result.unresumable !== undefined)} | ${sum(results, (result) => result.torn)} | ${count(results, (result) => result.outputIdentical)} / ${trials} | ${sum(results, (result) => result.calls.repeated.length)} | ${seconds(wallMs)} |`;
  });
  const failures = summaries.flatMap(({ results, kept }) =>
    results.filter(trialFailed).map((result) =>
      failureLine(
        result,
        kept.find((path) => path.endsWith(`/${result.provider}-${result.index}`)),
      ),
    ),
  );
  const checkpoints = summaries.map((summary) => summary.referenceCheckpoints).join(' / ');
  return [
    "# Crash trials: kill -9 at random moments of a '*' run",
    '',
    '```sh',
    context.command,
    '```',
    '',
    `Each trial starts a new process that runs a crew of 3 agents and 4 tasks (one tool call per task: 8 model calls, ${checkpoints} checkpoints on \`'*'\`) with the offline model (${context.latencyMs} ms simulated latency per call), and sends it SIGKILL after a delay drawn uniformly from [0, the wall time of a whole run from spawn to exit] — so kills land during start-up, between events and inside checkpoint writes. Then this process checks what the kill left (every visible JSON checkpoint file, or every listed SQLite checkpoint, is read and validated with \`loadCheckpoint\`; the SQLite database, copied as it was left, passes \`PRAGMA integrity_check\`), and a new process continues the latest checkpoint — alternately through \`continueFromCheckpoint\` and \`Crew.fromCheckpoint\` (the crew rebuilt from the checkpoint alone) — or starts afresh when the kill came before the first checkpoint. Its output and every task output in its last checkpoint are compared with the uninterrupted run's. Both processes log every model request (a digest of its prompt) with a synchronous write before sending it; a completion counts as checkpointed when the checkpoint resumed from holds it (the task's output, or the assistant message in its saved conversation), and a repeated call is a request of the resuming process identical to one whose completion was checkpointed. Trials run ${context.concurrency} at a time; random seed ${context.seed}.`,
    '',
    '| provider | trials | kills before first checkpoint (fresh run) | unresumable states | torn files visible | outputs identical | repeated checkpointed LLM calls | total wall time |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...barRows,
    '',
    `SPEC §8 crash bar (0 unresumable states, 0 torn files visible, identical outputs, 0 repeated checkpointed calls): ${summaries.map((summary) => `${providerLabel[summary.provider]} ${barMet(summary.results) ? 'met' : 'NOT met'}`).join(', ')}.`,
    '',
    "How far the runs had got when they were killed (checkpoints the kill left, in quarters of a whole run's checkpoints):",
    '',
    '| provider | none (start-up) | first quarter | second quarter | third quarter | last quarter | run ended before the kill |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...summaries.map(progressRow),
    '',
    'Where the kills landed and what the resumes did:',
    '',
    '| provider | uninterrupted run (median of the first runs) | run length the delays were drawn against | kills inside a checkpoint write | temp files left | checkpointed completions at kill | uncheckpointed calls made again | calls made again whose `llm_call_completed` was checkpointed | calls made again at a checkpointed position | resumed via continueFromCheckpoint / Crew.fromCheckpoint |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...summaries.map(detailRow),
    '',
    'The run length follows the machine\'s load: it is the median wall time of the latest whole runs (the first uninterrupted runs, then every run a trial happened to complete), since a figure measured once is wrong as soon as the load changes. "Kills inside a checkpoint write" come from the call log (a `checkpoint_started` without its `checkpoint_completed`). "Uncheckpointed calls made again" are requests the killed process had sent whose answer was not yet in a checkpoint: paying for them again is expected. The next two columns are stricter readings of "repeated": by the event history rather than the saved conversation, and by position (task and turn) rather than identical prompt.',
    '',
    ...(failures.length > 0 ? ['Failed trials:', '', ...failures, ''] : ['No trial failed.', '']),
    `Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, children ${context.childStart}; 1-minute load average ${context.loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after.`,
  ].join('\n');
}
