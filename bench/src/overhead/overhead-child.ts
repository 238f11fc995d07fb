// One measured run of the run-overhead bench, in a process of its own (cold: nothing loaded, compiled
// or cached by an earlier run): crew-50 kicked off once, checkpointing on '*' to the given provider or
// not at all. Prints one JSON line (see OverheadSample) and exits.
//   overhead-child.mjs --variant none|sqlite|json --latency 10 --tasks 50 --directory DIR
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { type CheckpointConfigInput, type CheckpointProvider, RuntimeState } from '@crewline/runtime-state';
import { notesTool } from '../crash/crash-crew.js';
import type { OverheadSample, OverheadVariant } from './overhead-sample.js';

const { values } = parseArgs({
  options: {
    variant: { type: 'string' },
    latency: { type: 'string', default: '10' },
    tasks: { type: 'string', default: '50' },
    'response-bytes': { type: 'string', default: '2048' },
    directory: { type: 'string' },
  },
});
const variant = values.variant as OverheadVariant;
const directory = values.directory!;

const llm = offlineModel({
  latencyMs: Number(values.latency),
  responseBytes: Number(values['response-bytes']),
  // One tool call at the start of each task's conversation, then the answer.
  script: (call) =>
    call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
      ? { toolName: 'notes', input: { subject: 'the task' } }
      : undefined,
});

let provider: CheckpointProvider | undefined;
let checkpoint: CheckpointConfigInput | false = false;
if (variant === 'json') {
  provider = new JsonProvider();
  checkpoint = { location: join(directory, 'json'), onEvents: ['*'], provider };
} else if (variant !== 'none') {
  provider = new SqliteProvider({
    groupCommit: variant.endsWith('-groups'),
    synchronous: variant.startsWith('sqlite-full') ? 'full' : 'normal',
  });
  checkpoint = { location: join(directory, 'crew-50.db'), onEvents: ['*'], provider };
}

const agents = ['Researcher', 'Writer', 'Reviewer'].map(
  (role) =>
    new Agent({
      role,
      goal: `Do the ${role.toLowerCase()} work on {topic}`,
      backstory: 'Experienced',
      llm,
      tools: [notesTool],
    }),
);
const tasks = Array.from(
  { length: Number(values.tasks) },
  (_, index) =>
    new Task({
      name: `step-${index + 1}`,
      description: `Step ${index + 1} of the {topic} report: extend the previous step with new findings`,
      expectedOutput: 'about two kilobytes of notes',
      agent: agents[index % agents.length]!,
    }),
);
const crew = new Crew({ name: 'crew-50', agents, tasks, checkpoint });

// Where the time goes: the run's own calls into its state, timed by wrapping them on the prototype
// (the bench's instrument; the runtime is not changed for it).
const spent = { buildingMs: 0, barrierWaitMs: 0 };
const prototype = RuntimeState.prototype;
const { durable, writeCheckpoint, writeCheckpointSync } = prototype;
prototype.durable = async function (this: RuntimeState) {
  const start = performance.now();
  try {
    await durable.call(this);
  } finally {
    spent.barrierWaitMs += performance.now() - start;
  }
};
prototype.writeCheckpoint = function (this: RuntimeState, ...args) {
  const start = performance.now();
  try {
    return writeCheckpoint.apply(this, args);
  } finally {
    spent.buildingMs += performance.now() - start;
  }
};
prototype.writeCheckpointSync = function (this: RuntimeState, ...args) {
  const start = performance.now();
  try {
    return writeCheckpointSync.apply(this, args);
  } finally {
    spent.buildingMs += performance.now() - start;
  }
};

const started = performance.now();
const cpuStarted = process.cpuUsage();
// kickoff returns once every checkpoint of the run is written (background writes included).
await crew.kickoff({ inputs: { topic: 'tidal energy' } });
const kickoffMs = performance.now() - started;
const cpu = process.cpuUsage(cpuStarted);
await provider?.close?.();

/** Bytes of the checkpoint files under a JSON location (the id index left out). */
function checkpointFileBytes(location: string): number {
  return readdirSync(location, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.json') && !path.startsWith('.'))
    .reduce((sum, path) => sum + statSync(join(location, path)).size, 0);
}

const sample: OverheadSample = {
  variant,
  kickoffMs,
  cpuMs: (cpu.user + cpu.system) / 1000,
  // On '*' every recorded event is a checkpoint.
  checkpoints: checkpoint === false ? 0 : (crew.lastRun?.state.events.length ?? 0),
  events: crew.lastRun?.state.events.length ?? 0,
  modelCalls: llm.calls.length,
  ...spent,
  ...(variant === 'json' ? { fileBytes: checkpointFileBytes(join(directory, 'json')) } : {}),
};
console.log(JSON.stringify(sample));
