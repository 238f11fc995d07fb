// One crash trial: a '*' run killed with SIGKILL at a chosen moment, what it left checked, the run
// continued in a new process, and the result compared with the uninterrupted run.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeCalls, type CallAnalysis } from './call-analysis.js';
import { endsInsideWrite, readCallLog, requestsOf } from './call-log.js';
import { type ChildEnd, type ChildScript, startChild } from './child-script.js';
import { readFinalState } from './final-state.js';
import { checkStorage, type ProviderName, type StorageCheck, tornCount } from './storage-check.js';

/** The uninterrupted run every trial is compared with. */
export interface ReferenceRun {
  output: string;
  taskOutputs: (string | undefined)[];
  /** Prompt keys of its model requests. */
  keys: ReadonlySet<string>;
  /** Its wall time from spawn to exit (the median of several runs). */
  durationMs: number;
  /** Checkpoints it wrote. */
  checkpoints: number;
}

export interface TrialSetup {
  provider: ProviderName;
  index: number;
  /** When to kill, in milliseconds after the child was spawned. */
  delayMs: number;
  /** How the new process continues: `continueFromCheckpoint` or `Crew.fromCheckpoint`. */
  resumeHow: 'continue' | 'rebuild';
  latencyMs: number;
  /** An empty directory for this trial. */
  directory: string;
  script: ChildScript;
  reference: ReferenceRun;
  /** A resume that takes longer than this is killed and counted unresumable. */
  resumeTimeoutMs: number;
}

export interface TrialResult {
  provider: ProviderName;
  index: number;
  delayMs: number;
  /** When the kill was actually sent (timers run late on a busy machine); undefined if never sent. */
  killedAtMs?: number;
  resumeHow: 'continue' | 'rebuild';
  /** The run had ended on its own before the kill was due. */
  finishedBeforeKill: boolean;
  /** The call log ends inside a checkpoint write: the kill interrupted a write. */
  insideWrite: boolean;
  /** Checkpoints the killed run left (0: the new process starts a fresh run). */
  checkpointsAtKill: number;
  check: Omit<StorageCheck, 'latest'>;
  torn: number;
  /** Why the state could not be resumed, if it could not. */
  unresumable?: string;
  outputIdentical: boolean;
  /** What differed from the uninterrupted run. */
  mismatch?: string;
  calls: CallAnalysis;
  /** Requests the killed and the resuming process made. */
  killedRequests: number;
  resumedRequests: number;
  /** Anything else that broke an invariant (the run failing on its own, two kickoffs in history...). */
  anomalies: string[];
  /**
   * Wall times (spawn to exit) of whole uninterrupted runs this trial happened to make: a run that
   * ended before its kill, a fresh run after a kill before the first checkpoint. They tell the
   * current length of a run under the machine's current load.
   */
  wholeRunsMs: number[];
}

/** Copies a checkpoint location (directory, or database with its WAL) as the kill left it. */
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

function describeEnd(end: ChildEnd): string {
  const how = end.signal ? `signal ${end.signal}` : `exit code ${end.code}`;
  return `${how}: ${end.stderr.trim().split('\n').slice(-6).join(' | ').slice(0, 800)}`;
}

/** Kills a child after `delayMs` unless it ended before; resolves with its end and the kill time. */
async function runAndKill(
  setup: TrialSetup,
  args: string[],
): Promise<{ end: ChildEnd; killedAtMs?: number }> {
  const started = startChild(setup.script, args);
  let killedAtMs: number | undefined;
  const timer = setTimeout(() => {
    if (started.child.exitCode === null && started.child.signalCode === null) {
      killedAtMs = performance.now() - started.startedAt;
      started.child.kill('SIGKILL');
    }
  }, setup.delayMs);
  const end = await started.ended;
  clearTimeout(timer);
  return { end, ...(killedAtMs !== undefined ? { killedAtMs } : {}) };
}

/** Runs one trial. Never throws for what it measures: failures are counted in the result. */
export async function runTrial(setup: TrialSetup): Promise<TrialResult> {
  const { provider, directory } = setup;
  const location = join(directory, provider === 'json' ? 'checkpoints' : 'checkpoints.db');
  const killedLog = join(directory, 'calls-killed.jsonl');
  const resumedLog = join(directory, 'calls-resumed.jsonl');
  const latency = String(setup.latencyMs);
  const anomalies: string[] = [];

  const killed = await runAndKill(setup, ['run', provider, location, killedLog, latency]);
  const finishedBeforeKill = killed.killedAtMs === undefined;
  if (finishedBeforeKill && killed.end.code !== 0)
    anomalies.push(`the run failed on its own: ${describeEnd(killed.end)}`);
  const killedEntries = readCallLog(killedLog);

  // The state exactly as the kill left it, kept with the trial in case it fails.
  preserve(provider, location, join(directory, 'after-kill'));
  const { latest, ...check } = await checkStorage(provider, location, join(directory, 'inspect'));
  const fresh = check.listed === 0;

  const resumeArgs = fresh
    ? ['run', provider, location, resumedLog, latency]
    : ['resume', provider, location, resumedLog, latency, setup.resumeHow];
  const resumed = await runAndKill({ ...setup, delayMs: setup.resumeTimeoutMs }, resumeArgs);
  const resumedRequests = requestsOf(readCallLog(resumedLog));
  const calls = analyzeCalls({
    killed: requestsOf(killedEntries),
    resumed: resumedRequests,
    checkpoint: latest,
    referenceKeys: setup.reference.keys,
  });

  let unresumable: string | undefined;
  let mismatch: string | undefined;
  const printed = lastJsonLine(resumed.end.stdout);
  if (resumed.killedAtMs !== undefined) unresumable = `no end after ${setup.resumeTimeoutMs} ms`;
  else if (resumed.end.code !== 0 || typeof printed?.output !== 'string')
    unresumable = describeEnd(resumed.end);
  else if (check.latestError !== undefined)
    unresumable = `latest checkpoint unreadable: ${check.latestError}`;
  if (unresumable === undefined) {
    try {
      const final = await readFinalState(provider, location);
      if (printed!.output !== setup.reference.output) mismatch = 'final output differs';
      else {
        const differing = final.taskOutputs.flatMap((output, taskIndex) =>
          output === setup.reference.taskOutputs[taskIndex] ? [] : [taskIndex],
        );
        if (differing.length > 0 || final.taskOutputs.length !== setup.reference.taskOutputs.length)
          mismatch = `task outputs differ in the last checkpoint: tasks ${differing.join(', ')}`;
      }
      if (final.trigger !== 'crew_kickoff_completed')
        anomalies.push(`last checkpoint's trigger is ${final.trigger}, not crew_kickoff_completed`);
      if (final.kickoffs !== 1)
        anomalies.push(`${final.kickoffs} crew_kickoff_started events in the history`);
    } catch (error) {
      unresumable = `the resumed run's last checkpoint does not read: ${String(error)}`;
    }
  }
  if (calls.unknownPrompts.length > 0)
    anomalies.push(`${calls.unknownPrompts.length} resumed request(s) the uninterrupted run never made`);

  const wholeRunsMs = [
    ...(finishedBeforeKill && killed.end.code === 0 ? [killed.end.wallMs] : []),
    ...(fresh && resumed.killedAtMs === undefined && resumed.end.code === 0 ? [resumed.end.wallMs] : []),
  ];
  return {
    provider,
    index: setup.index,
    delayMs: setup.delayMs,
    ...(killed.killedAtMs !== undefined ? { killedAtMs: killed.killedAtMs } : {}),
    resumeHow: setup.resumeHow,
    finishedBeforeKill,
    insideWrite: !finishedBeforeKill && endsInsideWrite(killedEntries),
    checkpointsAtKill: check.listed,
    check,
    torn: tornCount(check),
    ...(unresumable !== undefined ? { unresumable } : {}),
    outputIdentical: unresumable === undefined && mismatch === undefined,
    ...(mismatch !== undefined ? { mismatch } : {}),
    calls,
    killedRequests: requestsOf(killedEntries).length,
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
