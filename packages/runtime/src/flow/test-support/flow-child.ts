// A child process for the cross-process flow tests. It runs (or resumes) scenarios one after the
// other and reports on stdout, one JSON object per line: {"request": i} when request i starts,
// {"exec": method} as each method body starts, {"llm": 1} per completed LLM call, {"result": ...} at
// the end of each request. With `killAt`, it prints {"killpoint": true} at that moment and blocks, so
// the parent's SIGKILL lands exactly there (after the checkpoint of that event was written).
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import { installAutoCheckpoint } from '../../checkpointing/auto-checkpoint.js';
import { Run } from '../../checkpointing/run.js';
import type { Flow, FlowResult } from '../index.js';
import { model, TwoCrewFlow } from './crew-scenarios.js';
import { PausingFlow, PersistentFlow } from './process-scenarios.js';
import { CycleFlow, executions, JoinFlow, LinearFlow, LoopFlow, onExecution, PassFlow } from './scenarios.js';

export type KillPoint =
  | { kind: 'event'; type: string; method?: string; occurrence?: number }
  | { kind: 'exec'; method: string; occurrence?: number };

export interface ChildRequest {
  scenario:
    | 'LinearFlow'
    | 'JoinFlow'
    | 'CycleFlow'
    | 'LoopFlow'
    | 'PassFlow'
    | 'TwoCrewFlow'
    | 'PersistentFlow'
    | 'PausingFlow';
  mode: 'run' | 'resume' | 'kickoff-by-id' | 'answer';
  location: string;
  onEvents?: string[];
  stateId?: string;
  answer?: string;
  reference?: string;
  killAt?: KillPoint;
}

const classes = {
  LinearFlow,
  JoinFlow,
  CycleFlow,
  LoopFlow,
  PassFlow,
  TwoCrewFlow,
  PersistentFlow,
  PausingFlow,
} as const;

function report(value: unknown): void {
  writeSync(1, `${JSON.stringify(value)}\n`);
}

function block(): never {
  // A kill point comes after its event's checkpoint is on disk: JsonProvider writes automatic
  // checkpoints in the background, so what is queued is written now, as the run's exit handler would.
  Run.current()?.state.writePendingSync();
  report({ killpoint: true });
  // Synchronous on purpose: nothing else of the run may happen before the parent kills us.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  process.exit(3);
}

const parsed = JSON.parse(process.argv[2] ?? '[]') as ChildRequest | ChildRequest[];
const requests = Array.isArray(parsed) ? parsed : [parsed];
let request: ChildRequest = requests[0] as ChildRequest;
// The auto-checkpoint listener must come first: a kill point fires after the checkpoint of its event.
installAutoCheckpoint(eventBus, Run.ofState);
const seen = new Map<string, number>();
const matches = (key: string, occurrence = 1) => {
  const count = (seen.get(key) ?? 0) + 1;
  seen.set(key, count);
  return count === occurrence;
};
onExecution((method) => {
  report({ exec: method });
  const kill = request.killAt;
  if (kill?.kind === 'exec' && kill.method === method && matches(`exec:${method}`, kill.occurrence)) block();
});
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event.type === 'llm_call_completed') report({ llm: 1 });
  const kill = request.killAt;
  if (kill?.kind !== 'event' || event.type !== kill.type) return;
  const method = (event as { methodName?: string }).methodName;
  if (kill.method !== undefined && kill.method !== method) return;
  if (matches(`event:${event.type}:${method ?? ''}`, kill.occurrence)) block();
});

type AnyFlowClass = typeof LinearFlow & { new (...args: any[]): Flow<any> };

async function perform(current: ChildRequest): Promise<FlowResult<any>> {
  const FlowClass = classes[current.scenario] as unknown as AnyFlowClass;
  const checkpoint = current.onEvents
    ? { location: current.location, onEvents: current.onEvents as never }
    : undefined;
  switch (current.mode) {
    case 'run':
    case 'kickoff-by-id':
      return new FlowClass(checkpoint ? { checkpoint } : {}).kickoff(
        current.stateId ? { inputs: { id: current.stateId } } : {},
      );
    case 'resume':
      return (
        await FlowClass.fromCheckpoint({ restoreFrom: current.reference ?? current.location })
      ).kickoff();
    case 'answer':
      return FlowClass.resume(
        current.reference ?? { id: current.stateId as string },
        current.answer as string,
      );
  }
}

for (const [index, current] of requests.entries()) {
  request = current;
  seen.clear();
  executions.length = 0;
  model.reset();
  report({ request: index });
  const result = await perform(current);
  report({
    result: {
      status: result.status,
      stateId: result.stateId,
      state: result.state,
      output: result.output,
      completedMethods: result.completedMethods,
      pause: result.pause ?? null,
    },
  });
}
