// One process of a crash trial (started by crash-trials.ts, never by hand). Arguments:
//   run    <json|sqlite> <location> <call log> <latency ms>          a fresh '*' run of the crash crew
//   resume <json|sqlite> <location> <call log> <latency ms> <how>    continue the location's latest
//          checkpoint in this new process; <how> is `continue` (continueFromCheckpoint, what the CLI
//          does) or `rebuild` (Crew.fromCheckpoint: the crew rebuilt from the checkpoint alone)
// Every model request and every checkpoint write is appended to the call log before it happens (see
// call-log.ts). At the end the process prints one JSON line, {"output": ...}; nothing it prints is
// used for timing: the parent kills it at a random moment of its own choosing.
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointStartedEvent,
  eventBus,
  LLMCallStartedEvent,
} from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Crew, continueFromCheckpoint } from '@crewline/runtime';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { assistantTurns, openCallLog, requestKey } from './call-log.js';
import { crashCrew, crashInputs, crashModel, registerCrashProject } from './crash-crew.js';

const [mode, providerKind, location, callLogPath, latency, how] = process.argv.slice(2);
if (!location || !callLogPath || (providerKind !== 'json' && providerKind !== 'sqlite')) {
  throw new Error(`usage: crash-child run|resume json|sqlite <location> <call log> <latency ms> [how]`);
}

const log = openCallLog(callLogPath);
// The task a request belongs to: the runtime announces each model call (with its task) just before
// making it.
let currentTask = -1;
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event instanceof LLMCallStartedEvent) currentTask = Number(event.context.taskIndex ?? -1);
  else if (event instanceof CheckpointStartedEvent)
    log.append({ kind: 'write-started', at: performance.now() });
  else if (event instanceof CheckpointCompletedEvent || event instanceof CheckpointFailedEvent)
    log.append({ kind: 'write-finished', at: performance.now() });
});

const model = crashModel({
  latencyMs: Number(latency ?? 0),
  onRequest: (prompt) =>
    log.append({
      kind: 'request',
      key: requestKey(prompt),
      taskIndex: currentTask,
      turn: assistantTurns(prompt),
      at: performance.now(),
    }),
});
registerCrashProject(model);

function newProvider(): CheckpointProvider {
  return providerKind === 'sqlite' ? new SqliteProvider() : new JsonProvider();
}

let output: string;
if (mode === 'run') {
  const provider = newProvider();
  const crew = crashCrew(model, { location, onEvents: '*', provider });
  output = (await crew.kickoff({ inputs: crashInputs })).raw;
  await provider.close?.();
} else if (mode === 'resume' && how === 'continue') {
  output = (await continueFromCheckpoint({ reference: location, mode: 'resume' })).output;
} else if (mode === 'resume' && how === 'rebuild') {
  output = (await (await Crew.fromCheckpoint({ restoreFrom: location })).kickoff()).raw;
} else {
  throw new Error(`unknown mode ${mode} ${how ?? ''}`);
}
log.close();
process.stdout.write(`${JSON.stringify({ output })}\n`);
