// One process of a crash trial (started by crash-trials.ts, never by hand). Arguments:
//   run    <crew|flow> <json|sqlite> <location> <call log> <latency ms>          a fresh '*' run
//   resume <crew|flow> <json|sqlite> <location> <call log> <latency ms> <how>    continue the
//          location's latest checkpoint in this new process; <how> is `continue`
//          (continueFromCheckpoint, what the CLI does) or `rebuild` (Crew.fromCheckpoint or
//          CrashFlow.fromCheckpoint: the crew or flow rebuilt from the checkpoint alone)
// Every model request and every checkpoint write is appended to the call log before it happens, and
// every model answer as it arrives (see call-log.ts). At the end the process prints one JSON line, {"output": ...}; nothing it prints is
// used for timing: the parent interrupts it at a random moment of its own choosing.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointStartedEvent,
  CrewlineError,
  eventBus,
  LLMCallStartedEvent,
} from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Crew, continueFromCheckpoint } from '@crewline/runtime';
import type { CheckpointConfigInput, CheckpointProvider } from '@crewline/runtime-state';
import { assistantTurns, conversationKey, openCallLog, requestKey } from './call-log.js';
import { crashCrew, crashInputs, crashModel, type ModelRequest, registerCrashProject } from './crash-crew.js';
import { CrashFlow, crashFlow, registerCrashFlow } from './crash-flow.js';

const [mode, scenario, providerKind, location, callLogPath, latency, how] = process.argv.slice(2);
if (
  !location ||
  !callLogPath ||
  (scenario !== 'crew' && scenario !== 'flow') ||
  (providerKind !== 'json' && providerKind !== 'sqlite')
) {
  throw new Error(
    'usage: crash-child run|resume crew|flow json|sqlite <location> <call log> <latency ms> [how]',
  );
}

const log = openCallLog(callLogPath);
// The conversation a request belongs to: the runtime announces each model call (with its agent and
// task) just before making it.
let currentConversation = '';
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event instanceof LLMCallStartedEvent)
    currentConversation = conversationKey(event.context.agentRole, event.context.taskIndex);
  else if (event instanceof CheckpointStartedEvent)
    log.append({ kind: 'write-started', at: performance.now() });
  else if (event instanceof CheckpointCompletedEvent || event instanceof CheckpointFailedEvent)
    log.append({ kind: 'write-finished', at: performance.now() });
});

// Each answer is logged with its request's key and place, computed when the request went out: calls
// of different tasks can overlap (a flow's or an async task's), so the conversation announced last
// may not be the answer's, and nothing is hashed between the answer's arrival and its line.
const requests = new WeakMap<ModelRequest, { key: string; conversation: string; turn: number }>();
const model = crashModel({
  latencyMs: Number(latency ?? 0),
  onRequest: (prompt) => {
    const call = { key: requestKey(prompt), conversation: currentConversation, turn: assistantTurns(prompt) };
    requests.set(prompt, call);
    log.append({ kind: 'request', ...call, at: performance.now() });
  },
  onCompletion: (prompt) => {
    const call = requests.get(prompt);
    if (call) log.append({ kind: 'completion', ...call, at: performance.now() });
  },
});
registerCrashProject(model);
registerCrashFlow(model);

/**
 * How long a run's hold on its lineage lasts without renewal. A SIGKILLed run stops renewing, and a
 * resume waits for its lease to run out (as a user's would): the shortest lease the runtime accepts
 * keeps that wait short; renewals every third of it still leave a busy machine's event loop ample room.
 */
const leaseTtlMs = 3000;

async function freshRun(): Promise<string> {
  const provider: CheckpointProvider = providerKind === 'sqlite' ? new SqliteProvider() : new JsonProvider();
  const checkpoint: CheckpointConfigInput = { location: location!, onEvents: '*', provider, leaseTtlMs };
  try {
    if (scenario === 'flow') return String((await crashFlow(checkpoint).kickoff()).output);
    return (await crashCrew(model, checkpoint).kickoff({ inputs: crashInputs })).raw;
  } finally {
    await provider.close?.();
  }
}

async function rebuiltRun(): Promise<string> {
  if (scenario === 'flow')
    return String((await (await CrashFlow.fromCheckpoint({ restoreFrom: location! })).kickoff()).output);
  return (await (await Crew.fromCheckpoint({ restoreFrom: location! })).kickoff()).raw;
}

/**
 * Resumes; when the interrupted process still holds the run (`conflict` with the time its lease has
 * left), waits for the lease to run out and tries again, logging the wait.
 */
async function resumeAfterLease(resume: () => Promise<string>): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await resume();
    } catch (error) {
      const expiresInMs = CrewlineError.hasCode(error, 'conflict')
        ? Number(error.details?.expiresInMs)
        : Number.NaN;
      if (!Number.isFinite(expiresInMs) || attempt > 3) throw error;
      log.append({ kind: 'lease-wait', waitedMs: expiresInMs, at: performance.now() });
      await sleep(expiresInMs + 50);
    }
  }
}

let output: string;
if (mode === 'run') output = await freshRun();
else if (mode === 'resume' && how === 'continue')
  output = await resumeAfterLease(
    async () => (await continueFromCheckpoint({ reference: location, mode: 'resume' })).output,
  );
else if (mode === 'resume' && how === 'rebuild') output = await resumeAfterLease(rebuiltRun);
else throw new Error(`unknown mode ${mode} ${how ?? ''}`);
log.close();
process.stdout.write(`${JSON.stringify({ output })}\n`);
