// One cold run in this process, for profiling what a checkpointing run pays (issue "The cost a run
// pays"): `crew` is crew-50 of run-overhead.ts (3 agents, 50 tasks, one tool call each, ≈2 KB
// answers); `flow` is a flow whose state keeps every step's ≈2 KB finding (25 steps, a one-task crew
// each), the state every checkpoint of a flow carries whole. Prints one JSON line: wall and CPU ms.
//
//   node --conditions=@crewline/source --import tsx bench/src/cost/checkpoint-cost.ts \
//     --scenario crew|flow --provider none|json|sqlite --latency 10 [--tasks 50]
// Add `--cpu-prof --cpu-prof-dir DIR` to node and read the profile with profile-shares.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, Flow, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { CheckpointConfigInput, CheckpointProvider } from '@crewline/runtime-state';
import { notesTool } from '../crash/crash-crew.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'crew' },
    provider: { type: 'string', default: 'json' },
    latency: { type: 'string', default: '10' },
    tasks: { type: 'string' },
    foreground: { type: 'boolean', default: false },
  },
});
const latencyMs = Number(values.latency);
const scenario = values.scenario === 'flow' ? 'flow' : 'crew';
const tasks = Number(values.tasks ?? (scenario === 'flow' ? 25 : 50));

const llm = offlineModel({
  latencyMs,
  responseBytes: 2048,
  script: (call) =>
    call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
      ? { toolName: 'notes', input: { subject: 'the task' } }
      : undefined,
});

function agent(role: string): Agent {
  return new Agent({
    role,
    goal: `Do the ${role.toLowerCase()} work on {topic}`,
    backstory: 'Experienced',
    llm,
    tools: [notesTool],
  });
}

function crew50(checkpoint: CheckpointConfigInput | false): Crew {
  const agents = ['Researcher', 'Writer', 'Reviewer'].map(agent);
  const list = Array.from(
    { length: tasks },
    (_, index) =>
      new Task({
        name: `step-${index + 1}`,
        description: `Step ${index + 1} of the {topic} report: extend the previous step with new findings`,
        expectedOutput: 'about two kilobytes of notes',
        agent: agents[index % agents.length]!,
      }),
  );
  return new Crew({ name: 'crew-50', agents, tasks: list, checkpoint });
}

interface FindingsState {
  topic: string;
  findings: string[];
}

class FindingsFlow extends Flow<FindingsState> {
  static flowName = 'FindingsFlow';
  initialState: FindingsState = { topic: 'tidal energy', findings: [] };

  @start()
  async research() {
    const researcher = agent('Researcher');
    for (let step = 1; step <= tasks; step += 1) {
      const task = new Task({
        description: `Finding ${step} about {topic}`,
        expectedOutput: 'about two kilobytes of notes',
        agent: researcher,
      });
      const crew = new Crew({ name: 'step', agents: [researcher], tasks: [task] });
      const output = await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus });
      this.state.findings.push(output.raw);
    }
    return this.state.findings.length;
  }
}

const directory = mkdtempSync(join(tmpdir(), 'crewline-cost-'));
let provider: CheckpointProvider | undefined;
let checkpoint: CheckpointConfigInput | false = false;
if (values.provider === 'json') {
  provider = new JsonProvider();
  // --foreground: every automatic checkpoint written inside its event, as before background writes.
  if (values.foreground) Object.assign(provider.capabilities, { backgroundWrites: false });
  checkpoint = { location: join(directory, 'json'), onEvents: ['*'], provider };
} else if (values.provider === 'sqlite') {
  provider = new SqliteProvider();
  checkpoint = { location: join(directory, 'run.db'), onEvents: ['*'], provider };
}
const started = performance.now();
const cpuStarted = process.cpuUsage();
let checkpoints = 0;
if (scenario === 'crew') {
  const crew = crew50(checkpoint);
  await crew.kickoff({ inputs: { topic: 'tidal energy' } });
  checkpoints = checkpoint === false ? 0 : (crew.lastRun?.state.events.length ?? 0);
} else {
  const flow = new FindingsFlow({ checkpoint });
  await flow.kickoff();
  checkpoints = checkpoint === false ? 0 : flow.state.findings.length;
}
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuStarted);
await provider?.close?.();
rmSync(directory, { recursive: true, force: true });
console.log(
  JSON.stringify({
    scenario,
    provider: values.provider,
    latencyMs,
    tasks,
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    checkpoints,
  }),
);
