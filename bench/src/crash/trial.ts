// One crash trial: a '*' run interrupted by a signal (SIGKILL, SIGINT or SIGTERM) at a chosen
// moment, what it left checked, the run continued in a new process, and the result compared with the
// uninterrupted run.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { analyzeCalls, type CallAnalysis } from './call-analysis.js';
import {
  completedKeysOf,
  endsInsideWrite,
  leaseWaitOf,
  readCallLog,
  requestsOf,
  writesAfterAnswer,
} from './call-log.js';
import { type ChildEnd, type ChildScript, startChild } from './child-script.js';
import { differingTasks, readFinalState, type TaskOutputs } from './final-state.js';
import { processSignal, type ScenarioName, type SignalName, scenarios } from './scenario.js';
import { checkStorage, type ProviderName, type StorageCheck, tornCount } from './storage-check.js';

/** The uninterrupted run every trial is compared with. */
export interface ReferenceRun {
  output: string;
  taskOutputs: TaskOutputs;
  /** Prompt keys of its model requests. */
  keys: ReadonlySet<string>;
  /** Its wall time from spawn to exit (the median of several runs). */
  durationMs: number;
  /** Checkpoints it wrote. */
  checkpoints: number;
}

export interface TrialSetup {
  scenario: ScenarioName;
  signal: SignalName;
  provider: ProviderName;
  index: number;
  /** When to send the signal, in milliseconds after the child was spawned. */
  delayMs: number;
  /** How the new process continues: `continueFromCheckpoint` or `fromCheckpoint`. */
  resumeHow: 'continue' | 'rebuild';
  latencyMs: number;
  /** An empty directory for this trial. */
  directory: string;
  script: ChildScript;
  reference: ReferenceRun;
  /** A process still alive this long after SIGINT/SIGTERM did not end: it is killed and counted. */
  endDeadlineMs: number;
  /** A resume that takes longer than this is killed and counted unresumable. */
  resumeTimeoutMs: number;
}

export interface TrialResult {
  scenario: ScenarioName;
  signal: SignalName;
  provider: ProviderName;
  index: number;
  delayMs: number;
  /** When the signal was actually sent (timers run late on a busy machine); undefined if never sent. */
  interruptedAtMs?: number;
  /** How the interrupted process ended: `SIGINT`, `exit 0`... */
  endedBy: string;
  /** SIGINT/SIGTERM only: false when the process was still alive at the deadline (the bar: never). */
  endedInTime: boolean;
  /** The latest checkpoint left was written for the signal itself (trigger `SIGINT`/`SIGTERM`). */
  signalCheckpoint: boolean;
  resumeHow: 'continue' | 'rebuild';
  /** The run had ended on its own before the signal reached it. */
  finishedBeforeSignal: boolean;
  /** The call log ends inside a checkpoint write: the process ended while writing. */
  insideWrite: boolean;
  /** Checkpoints the interrupted run left (0: the new process starts a fresh run). */
  checkpointsLeft: number;
  check: Omit<StorageCheck, 'latest'>;
  torn: number;
  /** Why the state could not be resumed, if it could not. */
  unresumable?: string;
  outputIdentical: boolean;
  /** What differed from the uninterrupted run. */
  mismatch?: string;
  calls: CallAnalysis;
  /** How long the resume waited for the interrupted run's lease to run out (SIGKILL leaves it held). */
  leaseWaitMs: number;
  /**
   * One line per call paid twice whose answer had arrived but was not checkpointed: its place, and
   * the checkpoint writes the interrupted process began and finished after the answer arrived.
   */
  lostAnswers: string[];
  /** Requests the interrupted and the resuming process made. */
  interruptedRequests: number;
  resumedRequests: number;
  /** Anything else that broke an invariant (the run failing on its own, two starts in history...). */
  anomalies: string[];
  /**
   * Wall times (spawn to exit) of whole uninterrupted runs this trial happened to make: a run that
   * ended before its signal, a fresh run after an interruption before the first checkpoint. They
   * tell the current length of a run under the machine's current load.
   */
  wholeRunsMs: number[];
}

/** Copies a checkpoint location (directory, or database with its WAL) as the interruption left it. */
function preserve(provider: ProviderName, location: string, target: string): void {
  mkdirSync(target, { recursive: true });
  if (provider === 'json') {
    if (existsSync(location)) cpSync(location, join(target, 'checkpoints'), { recursive: true });
    return;
  }
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(`${location}${suffix}`))
      cpSync(`${location}${suffix}`, join(target, `checkpoints.db${suffix}`));
  }
}

function lastJsonLine(stdout: string): { output?: string } | undefined {
  const line = stdout.trim().split('\n').at(-1);
  try {
    return line ? (JSON.parse(line) as { output?: string }) : undefined;
  } catch {
    return undefined;
  }
}

function endName(end: ChildEnd): string {
  return end.signal ?? `exit ${end.code}`;
}

function describeEnd(end: ChildEnd): string {
  return `${endName(end)}: ${end.stderr.trim().split('\n').slice(-6).join(' | ').slice(0, 800)}`;
}

interface Interrupted {
  end: ChildEnd;
  /** When the signal was delivered; undefined when the process had ended before. */
  interruptedAtMs?: number;
  /** False when the process outlived the deadline after a SIGINT/SIGTERM and had to be killed. */
  endedInTime: boolean;
}

/**
 * Sends `signal` to a child after `delayMs` unless it ended before. After SIGINT/SIGTERM the child
 * has `endDeadlineMs` to end; past that it is killed, and counted as a process that did not end.
 */
async function runAndInterrupt(
  setup: Pick<TrialSetup, 'script' | 'endDeadlineMs'>,
  args: string[],
  signal: SignalName,
  delayMs: number,
): Promise<Interrupted> {
  const started = startChild(setup.script, args);
  let interruptedAtMs: number | undefined;
  let endedInTime = true;
  let deadline: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    if (started.child.exitCode !== null || started.child.signalCode !== null) return;
    // kill() is false when the process had already gone: then it was never interrupted.
    if (!started.child.kill(processSignal(signal))) return;
    interruptedAtMs = performance.now() - started.startedAt;
    if (signal === 'KILL') return;
    deadline = setTimeout(() => {
      endedInTime = false;
      started.child.kill('SIGKILL');
    }, setup.endDeadlineMs);
  }, delayMs);
  const end = await started.ended;
  clearTimeout(timer);
  clearTimeout(deadline);
  return { end, endedInTime, ...(interruptedAtMs !== undefined ? { interruptedAtMs } : {}) };
}

/**
 * True when the process ran to the end: it printed its output and exited 0. A signal "sent" after
 * that reached a process that had already exited but was not reaped yet (kill() still succeeds on
 * it), so the run finished before the signal.
 */
function ranToTheEnd(end: ChildEnd): boolean {
  return end.code === 0 && typeof lastJsonLine(end.stdout)?.output === 'string';
}

/** Checks how a process ended after a signal; returns the anomalies. */
function endAnomalies(setup: TrialSetup, interrupted: Interrupted, finishedBeforeSignal: boolean): string[] {
  const { end } = interrupted;
  if (finishedBeforeSignal) return end.code === 0 ? [] : [`the run failed on its own: ${describeEnd(end)}`];
  if (!interrupted.endedInTime) return [`still running ${setup.endDeadlineMs} ms after SIG${setup.signal}`];
  // The runtime checkpoints on the signal, then lets the process end as it would have without it.
  if (end.signal !== processSignal(setup.signal))
    return [`ended with ${describeEnd(end)} after SIG${setup.signal}, not by the signal`];
  return [];
}

/** The signal's own event in a checkpoint's history: the runtime delivered the signal to the run. */
function signalDelivered(signal: SignalName, latest: CheckpointDocument | undefined): boolean {
  return latest?.events.some((event) => event.type === processSignal(signal)) ?? false;
}

/** Runs one trial. Never throws for what it measures: failures are counted in the result. */
export async function runTrial(setup: TrialSetup): Promise<TrialResult> {
  const { scenario, provider, directory } = setup;
  const location = join(directory, provider === 'json' ? 'checkpoints' : 'checkpoints.db');
  const interruptedLog = join(directory, 'calls-interrupted.jsonl');
  const resumedLog = join(directory, 'calls-resumed.jsonl');
  const latency = String(setup.latencyMs);

  const interrupted = await runAndInterrupt(
    setup,
    ['run', scenario, provider, location, interruptedLog, latency],
    setup.signal,
    setup.delayMs,
  );
  const finishedBeforeSignal = interrupted.interruptedAtMs === undefined || ranToTheEnd(interrupted.end);
  const anomalies = endAnomalies(setup, interrupted, finishedBeforeSignal);
  const interruptedEntries = readCallLog(interruptedLog);

  // The state exactly as the interruption left it, kept with the trial in case it fails.
  preserve(provider, location, join(directory, 'after-interruption'));
  const { latest, ...check } = await checkStorage(provider, location, join(directory, 'inspect'));
  // A run that went on to its end although the runtime had handed it the signal ignored it.
  if (
    interrupted.interruptedAtMs !== undefined &&
    ranToTheEnd(interrupted.end) &&
    signalDelivered(setup.signal, latest)
  )
    anomalies.push(`the run received SIG${setup.signal} and still ran to its end`);
  const fresh = check.listed === 0;

  const resumeArgs = fresh
    ? ['run', scenario, provider, location, resumedLog, latency]
    : ['resume', scenario, provider, location, resumedLog, latency, setup.resumeHow];
  const resumed = await runAndInterrupt(setup, resumeArgs, 'KILL', setup.resumeTimeoutMs);
  const resumedEntries = readCallLog(resumedLog);
  const resumedRequests = requestsOf(resumedEntries);
  const leaseWaitMs = leaseWaitOf(resumedEntries);
  // The runtime releases the run's lease before SIGINT/SIGTERM ends the process.
  if (leaseWaitMs > 0 && setup.signal !== 'KILL' && !finishedBeforeSignal)
    anomalies.push(`the resume waited ${leaseWaitMs} ms for a lease SIG${setup.signal} should have released`);
  const calls = analyzeCalls({
    killed: requestsOf(interruptedEntries),
    resumed: resumedRequests,
    arrived: completedKeysOf(interruptedEntries),
    checkpoint: latest,
    referenceKeys: setup.reference.keys,
  });

  let unresumable: string | undefined;
  let mismatch: string | undefined;
  const printed = lastJsonLine(resumed.end.stdout);
  if (resumed.interruptedAtMs !== undefined) unresumable = `no end after ${setup.resumeTimeoutMs} ms`;
  else if (resumed.end.code !== 0 || typeof printed?.output !== 'string')
    unresumable = describeEnd(resumed.end);
  else if (check.latestError !== undefined)
    unresumable = `latest checkpoint unreadable: ${check.latestError}`;
  if (unresumable === undefined) {
    try {
      const final = await readFinalState(scenario, provider, location);
      const differing = differingTasks(final.taskOutputs, setup.reference.taskOutputs);
      if (printed!.output !== setup.reference.output) mismatch = 'final output differs';
      else if (differing.length > 0)
        mismatch = `task outputs differ in the last checkpoint: ${differing.join(', ')}`;
      const { finalTrigger, startEvent } = scenarios[scenario];
      if (final.trigger !== finalTrigger)
        anomalies.push(`last checkpoint's trigger is ${final.trigger}, not ${finalTrigger}`);
      if (final.starts !== 1) anomalies.push(`${final.starts} ${startEvent} events in the history`);
    } catch (error) {
      unresumable = `the resumed run's last checkpoint does not read: ${String(error)}`;
    }
  }
  if (calls.checkpointedNotArrived > 0)
    anomalies.push(
      `${calls.checkpointedNotArrived} checkpointed completion(s) the call log never saw arrive`,
    );
  if (calls.unknownPrompts.length > 0)
    anomalies.push(`${calls.unknownPrompts.length} resumed request(s) the uninterrupted run never made`);

  const wholeRunsMs = [
    ...(finishedBeforeSignal && interrupted.end.code === 0 ? [interrupted.end.wallMs] : []),
    ...(fresh && resumed.interruptedAtMs === undefined && resumed.end.code === 0 ? [resumed.end.wallMs] : []),
  ];
  return {
    scenario,
    signal: setup.signal,
    provider,
    index: setup.index,
    delayMs: setup.delayMs,
    ...(interrupted.interruptedAtMs !== undefined ? { interruptedAtMs: interrupted.interruptedAtMs } : {}),
    endedBy: endName(interrupted.end),
    endedInTime: interrupted.endedInTime,
    signalCheckpoint: latest?.metadata.trigger === processSignal(setup.signal),
    resumeHow: setup.resumeHow,
    finishedBeforeSignal,
    insideWrite: !finishedBeforeSignal && endsInsideWrite(interruptedEntries),
    checkpointsLeft: check.listed,
    check,
    torn: tornCount(check),
    ...(unresumable !== undefined ? { unresumable } : {}),
    outputIdentical: unresumable === undefined && mismatch === undefined,
    ...(mismatch !== undefined ? { mismatch } : {}),
    calls,
    leaseWaitMs,
    lostAnswers: calls.paidTwiceUncheckpointed.map((call) => {
      const writes = writesAfterAnswer(interruptedEntries, call.key);
      return `${call.conversation} turn ${call.turn} (after its answer arrived, ${writes.started} checkpoint write(s) began and ${writes.finished} finished before the signal)`;
    }),
    interruptedRequests: requestsOf(interruptedEntries).length,
    resumedRequests: resumedRequests.length,
    anomalies,
    wholeRunsMs,
  };
}

/** True when a trial broke a bar (or an invariant) and its files should be kept for reproduction. */
export function trialFailed(result: TrialResult): boolean {
  return (
    result.torn > 0 ||
    result.unresumable !== undefined ||
    !result.outputIdentical ||
    result.calls.repeated.length > 0 ||
    result.calls.repeatedByEvents.length > 0 ||
    result.calls.repeatedByPosition.length > 0 ||
    result.anomalies.length > 0
  );
}
