// The flow of the crash trials, defined the same way in every process: a start method, a router and
// listeners, each running a small crew on the offline model, so that a kill can land inside a crew
// inside a method. The flow checkpoints on '*' (its crews inherit the setting), and is registered by
// name so that a new process can rebuild it from a checkpoint alone.
import {
  Agent,
  Crew,
  Flow,
  type LanguageModelObject,
  listen,
  or,
  registerProject,
  router,
  start,
  Task,
} from '@crewline/runtime';
import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { notesTool } from './crash-crew.js';

/** The name checkpoints store for the flow, and the name it is registered under. */
export const CRASH_FLOW_NAME = 'CrashFlow';

interface CrashFlowState {
  topic: string;
  notes: string;
  verdict: string;
  report: string;
}

let flowModel: LanguageModelObject | undefined;

/** One agent with the notes tool, one crew of `steps.length` tasks; the crew's raw output. */
async function runCrew(flow: CrashFlow, role: string, steps: readonly string[]): Promise<string> {
  if (!flowModel) throw new Error('registerCrashFlow(model) must run before the flow');
  const agent = new Agent({
    role,
    goal: `Do the ${role.toLowerCase()} work on {topic}`,
    backstory: 'Experienced',
    llm: flowModel,
    tools: [notesTool],
  });
  const tasks = steps.map(
    (step) => new Task({ description: `${step} about {topic}`, expectedOutput: 'a few lines', agent }),
  );
  const crew = new Crew({ name: role.toLowerCase(), agents: [agent], tasks });
  return (await crew.kickoff({ inputs: { topic: flow.state.topic }, bus: flow.bus })).raw;
}

/** gather → assess (a router: `detailed` or `brief`) → expand or condense → publish. */
export class CrashFlow extends Flow<CrashFlowState> {
  static flowName = CRASH_FLOW_NAME;
  initialState = { topic: 'tidal energy', notes: '', verdict: '', report: '' };

  @start()
  async gather() {
    this.state.notes = await runCrew(this, 'Researcher', ['Gather sources', 'List the open questions']);
    return this.state.notes;
  }

  @router('gather')
  async assess(notes: string) {
    this.state.verdict = await runCrew(this, 'Reviewer', [`Judge these notes: ${notes.slice(0, 60)}`]);
    // The offline model is deterministic, so the route is the same in every run.
    return this.state.verdict.length % 2 === 0 ? 'detailed' : 'brief';
  }

  @listen('detailed')
  async expand() {
    return runCrew(this, 'Writer', ['Expand the notes into findings', 'Add the caveats']);
  }

  @listen('brief')
  async condense() {
    return runCrew(this, 'Writer', ['Condense the notes into findings', 'Add the caveats']);
  }

  @listen(or('expand', 'condense'))
  async publish(findings: string) {
    this.state.report = await runCrew(this, 'Editor', [`Edit these findings: ${findings.slice(0, 60)}`]);
    return this.state.report;
  }
}

/** Registers the flow by name (and remembers the model its crews use), as `crewline.config.ts` would. */
export function registerCrashFlow(model: LanguageModelObject): void {
  flowModel = model;
  registerProject({ flows: { [CRASH_FLOW_NAME]: CrashFlow } });
}

/** A new flow checkpointing with `checkpoint`. */
export function crashFlow(checkpoint: CheckpointConfigInput | false): CrashFlow {
  return new CrashFlow({ checkpoint });
}
