// The markdown report of the crash trials: one row per scenario, signal and provider.
import { cpus, loadavg } from 'node:os';
import { type ScenarioName, type SignalName, scenarios } from './scenario.js';
import type { ProviderName } from './storage-check.js';
import { type TrialResult, trialFailed } from './trial.js';

/** The trials of one scenario, signal and provider. */
export interface CombinationSummary {
  scenario: ScenarioName;
  signal: SignalName;
  provider: ProviderName;
  results: TrialResult[];
  /** Median wall time of the uninterrupted runs made first, spawn to exit. */
  referenceMs: number;
  /** Checkpoints an uninterrupted run writes. */
  referenceCheckpoints: number;
  /** The run lengths the signal delays were drawn against, one per trial. */
  runLengthsMs: number[];
  /** Wall time of these trials (and of the uninterrupted runs, for the first signal). */
  wallMs: number;
  /** Trial directories kept because the trial failed. */
  kept: string[];
}

export interface ReportContext {
  command: string;
  seed: number;
  latencyMs: number;
  concurrency: number;
  endDeadlineMs: number;
  loadBefore: number;
  childStart: string;
  /** Wall time of the whole command. */
  totalMs: number;
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

/** The first cells of every row: which trials the row is about. */
function label({ scenario, signal, provider }: CombinationSummary): string {
  return `| ${scenario} | SIG${signal} | ${providerLabel[provider]}`;
}

/**
 * True when every bar holds for these trials: SPEC §8 "Crash" (0 unresumable states, 0 torn files,
 * identical outputs, 0 repeated checkpointed calls) and, for SIGINT/SIGTERM, every process ended.
 */
export function barMet(results: readonly TrialResult[]): boolean {
  return (
    results.every((result) => result.unresumable === undefined && result.endedInTime) &&
    sum(results, (result) => result.torn) === 0 &&
    results.every((result) => result.outputIdentical) &&
    sum(results, (result) => result.calls.repeated.length) === 0
  );
}

function positions(calls: readonly { conversation: string; turn: number }[]): string {
  return calls.map((call) => `${call.conversation} turn ${call.turn}`).join(', ');
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
    result.interruptedAtMs !== undefined
      ? `signalled at ${result.interruptedAtMs.toFixed(0)} ms, ended by ${result.endedBy}`
      : 'ended before the signal';
  return `- ${result.scenario} SIG${result.signal} ${providerLabel[result.provider]} trial ${result.index}: delay ${result.delayMs.toFixed(1)} ms (${moment}${result.insideWrite ? ', inside a checkpoint write' : ''}), ${result.checkpointsLeft} checkpoints left, resumed with ${result.resumeHow}: ${what.join('; ')}${kept ? ` — files kept in \`${kept}\`` : ''}`;
}

/**
 * Calls the user paid for twice: a request of the resuming process identical to one whose answer had
 * arrived in the interrupted process, split by whether that answer was in the checkpoint resumed from.
 */
function paidTwice(results: readonly TrialResult[]): string {
  const all = sum(results, (result) => result.calls.paidTwice.length);
  const uncheckpointed = sum(results, (result) => result.calls.paidTwiceUncheckpointed.length);
  return `${all} (${all - uncheckpointed} / ${uncheckpointed})`;
}

function barRow(summary: CombinationSummary): string {
  const { results, signal } = summary;
  const trials = results.length;
  const ended = signal === 'KILL' ? '-' : `${count(results, (result) => result.endedInTime)} / ${trials}`;
  return `${label(summary)} | ${trials} | ${count(results, (result) => result.checkpointsLeft === 0)} | ${count(results, (result) => result.unresumable !== undefined)} | ${sum(results, (result) => result.torn)} | ${count(results, (result) => result.outputIdentical)} / ${trials} | ${sum(results, (result) => result.calls.repeated.length)} | ${paidTwice(results)} | ${ended} | ${seconds(summary.wallMs)} |`;
}

function signalRow(summary: CombinationSummary): string {
  const signalled = summary.results.filter((result) => !result.finishedBeforeSignal);
  const name = `SIG${summary.signal}`;
  return `${label(summary)} | ${signalled.length} | ${count(signalled, (result) => result.endedBy === name)} | ${count(signalled, (result) => !result.endedInTime)} | ${count(signalled, (result) => result.signalCheckpoint)} |`;
}

/** Trials by how far the run had got when it was interrupted: checkpoints left, in quarters of a run. */
function progressRow(summary: CombinationSummary): string {
  const { results, referenceCheckpoints } = summary;
  const quarter = referenceCheckpoints / 4;
  const cells = [
    count(results, (result) => result.checkpointsLeft === 0),
    ...[0, 1, 2, 3].map((index) =>
      count(
        results,
        (result) =>
          !result.finishedBeforeSignal &&
          result.checkpointsLeft > 0 &&
          result.checkpointsLeft > index * quarter &&
          (result.checkpointsLeft <= (index + 1) * quarter || index === 3),
      ),
    ),
    count(results, (result) => result.finishedBeforeSignal),
  ];
  return `${label(summary)} | ${cells.join(' | ')} |`;
}

/** Resumes that waited for the interrupted run's lease to run out, and the longest wait. */
function leaseWaits(results: readonly TrialResult[]): string {
  const waits = results.map((result) => result.leaseWaitMs).filter((wait) => wait > 0);
  return waits.length === 0 ? '0' : `${waits.length} (longest ${seconds(Math.max(...waits))})`;
}

function detailRow(summary: CombinationSummary): string {
  const { results, referenceMs, runLengthsMs, provider } = summary;
  const shortest = Math.min(...runLengthsMs);
  const longest = Math.max(...runLengthsMs);
  const resumed = (how: TrialResult['resumeHow']) =>
    count(results, (result) => result.checkpointsLeft > 0 && result.resumeHow === how);
  return `${label(summary)} | ${referenceMs.toFixed(0)} ms | ${shortest.toFixed(0)}–${longest.toFixed(0)} ms | ${count(results, (result) => result.insideWrite)} | ${provider === 'json' ? sum(results, (result) => result.check.tempFiles) : '-'} | ${sum(results, (result) => result.calls.arrived)} | ${sum(results, (result) => result.calls.checkpointed)} | ${sum(results, (result) => result.calls.remade)} | ${sum(results, (result) => result.calls.repeatedByEvents.length)} | ${sum(results, (result) => result.calls.repeatedByPosition.length)} | ${resumed('continue')} / ${resumed('rebuild')} | ${leaseWaits(results)} |`;
}

function scenarioLines(summaries: readonly CombinationSummary[]): string[] {
  const seen = new Map<ScenarioName, CombinationSummary>();
  for (const summary of summaries) if (!seen.has(summary.scenario)) seen.set(summary.scenario, summary);
  return [...seen.values()].map(
    (summary) =>
      `- **${summary.scenario}**: ${scenarios[summary.scenario].description}; an uninterrupted run writes ${summary.referenceCheckpoints} checkpoints on \`'*'\`.`,
  );
}

/**
 * The trials whose resume paid again for an answer that had arrived but was not checkpointed, with
 * where the kill came relative to the checkpoint writes after that answer.
 */
function lostAnswerLines(summaries: readonly CombinationSummary[]): string[] {
  const lines = summaries.flatMap(({ results }) =>
    results
      .filter((result) => result.lostAnswers.length > 0)
      .map(
        (result) =>
          `- ${result.scenario} SIG${result.signal} ${providerLabel[result.provider]} trial ${result.index}: ${result.lostAnswers.join('; ')}`,
      ),
  );
  if (lines.length === 0) return [];
  return [
    'Calls paid twice whose answer had arrived but was not in the checkpoint resumed from:',
    '',
    ...lines,
    '',
  ];
}

/** The whole report as markdown. Its first table holds the bars. */
export function renderReport(summaries: readonly CombinationSummary[], context: ReportContext): string {
  const failures = summaries.flatMap(({ results, kept }) =>
    results.filter(trialFailed).map((result) =>
      failureLine(
        result,
        kept.find((path) =>
          path.endsWith(`/${result.scenario}-${result.signal}-${result.provider}-${result.index}`),
        ),
      ),
    ),
  );
  const graceful = summaries.filter((summary) => summary.signal !== 'KILL');
  const head = '| scenario | signal | provider';
  return [
    '# Crash trials: SIGKILL, SIGINT and SIGTERM at random moments of a crew and a flow',
    '',
    '```sh',
    context.command,
    '```',
    '',
    `Each trial starts a new process that runs a scenario with the offline model (${context.latencyMs} ms simulated latency per call), checkpointing on \`'*'\`, and sends it a signal after a delay drawn uniformly from [0, the wall time of a whole run from spawn to exit] — so signals land during start-up, between events and inside checkpoint writes:`,
    '',
    ...scenarioLines(summaries),
    '',
    `After SIGINT or SIGTERM the process must end by itself (the runtime writes a checkpoint for the signal, then lets the signal end the process) within ${seconds(context.endDeadlineMs)}. Then this process checks what was left (every visible JSON checkpoint file, or every listed SQLite checkpoint, is read and validated with \`loadCheckpoint\`; the SQLite database, copied as it was left, passes \`PRAGMA integrity_check\`), and a new process continues the latest checkpoint — alternately through \`continueFromCheckpoint\` (what the CLI does) and \`Crew.fromCheckpoint\` / \`CrashFlow.fromCheckpoint\` (rebuilt from the checkpoint and the registered names alone) — or starts afresh when the signal came before the first checkpoint. Its output and every task output of every crew in its last checkpoint are compared with the uninterrupted run's. Both processes log every model request (a digest of its prompt) with a synchronous write before sending it; a completion counts as checkpointed when the checkpoint resumed from holds it (the task's output, or the assistant message in its saved conversation), and a repeated call is a request of the resuming process identical to one whose completion was checkpointed. The interrupted process also logs every answer the moment it arrives from the model, before the runtime handles it (from then on the user has paid for the call): "calls paid twice whose answer had arrived" are requests of the resuming process identical to a request whose answer had arrived, split by whether that answer was in the checkpoint resumed from (those are the repeated checkpointed calls) or not (an answer received, then lost with the process because the checkpoint holding it was not yet durable). Calls paid twice are what a user loses to an interruption; they are not part of the SPEC bar, which names checkpointed completions only. Trials run ${context.concurrency} at a time; random seed ${context.seed}; the whole command took ${seconds(context.totalMs)}.`,
    '',
    `${head} | trials | signalled before the first checkpoint (fresh run) | unresumable states | torn files visible | outputs identical | repeated checkpointed LLM calls | calls paid twice whose answer had arrived (checkpointed / not) | process ended after SIGINT/SIGTERM | wall time |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...summaries.map(barRow),
    '',
    `Bars (SPEC §8 crash: 0 unresumable states, 0 torn files visible, identical outputs, 0 repeated checkpointed calls; and every process ends after SIGINT/SIGTERM): ${summaries.every((summary) => barMet(summary.results)) ? 'met by every row' : `NOT met by ${summaries.filter((summary) => !barMet(summary.results)).length} row(s)`}.`,
    '',
    ...(graceful.length > 0
      ? [
          'What SIGINT and SIGTERM did (trials whose process was still running when the signal came):',
          '',
          `${head} | signalled | ended by the signal | still running at the deadline | last checkpoint written for the signal |`,
          '| --- | --- | --- | --- | --- | --- | --- |',
          ...graceful.map(signalRow),
          '',
          "A signal that lands before the first checkpoint, or between a run's last checkpoint and the end of the process, ends the process with nothing to write: those trials have no checkpoint written for the signal.",
          '',
        ]
      : []),
    "How far the runs had got when the signal came (checkpoints left, in quarters of a whole run's checkpoints):",
    '',
    `${head} | none (start-up) | first quarter | second quarter | third quarter | last quarter | run ended before the signal |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...summaries.map(progressRow),
    '',
    'Where the signals landed and what the resumes did:',
    '',
    `${head} | uninterrupted run (median of the first runs) | run length the delays were drawn against | signals inside a checkpoint write | temp files left | answers arrived at the signal | checkpointed completions at the signal | uncheckpointed calls made again | calls made again whose \`llm_call_completed\` was checkpointed | calls made again at a checkpointed position | resumed via continueFromCheckpoint / fromCheckpoint | resumes that waited for the interrupted run's lease |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...summaries.map(detailRow),
    '',
    'The run length follows the machine\'s load: it is the median wall time of the latest whole runs of the scenario and provider (the first uninterrupted runs, then every run a trial happened to complete), since a figure measured once is wrong as soon as the load changes. "Signals inside a checkpoint write" come from the call log (a `checkpoint_started` without its `checkpoint_completed`). "Uncheckpointed calls made again" are requests the interrupted process had sent whose answer was not yet in a checkpoint: the calls still in flight at the signal (no answer yet: repeating them is unavoidable) and the answers that arrived but were lost, the "not" part of "calls paid twice" in the first table. The next two columns are stricter readings of "repeated": by the event history rather than the saved conversation, and by position (conversation and turn) rather than identical prompt. A run holds its lineage while it runs (a lease it renews; the runs here take the shortest, 3 s): SIGINT and SIGTERM release it before the process ends, SIGKILL leaves it held, and a resume that finds it held waits for it to run out, as a user would — the last column counts those.',
    '',
    ...lostAnswerLines(summaries),
    ...(failures.length > 0 ? ['Failed trials:', '', ...failures, ''] : ['No trial failed.', '']),
    `Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, children ${context.childStart}; 1-minute load average ${context.loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after.`,
  ].join('\n');
}
