// The flow of docs/flow-state-persistence.md as a module of the runtime: report-flow.test.ts runs its
// crash, restart and re-runs and counts the model calls of each (the page itself is run by docs-check).
// #region flow
import { Agent, Crew, Flow, listen, listFlowStateHistory, persist, start, Task } from '@crewline/runtime';
// #endregion flow

/** Where states are saved: a directory (JSON files), a `.db` file (SQLite) or a `postgres://` URL. */
// #region flow
export const STATES_LOCATION = process.env.REPORT_STATES ?? './.checkpoints';

export interface ReportState {
  topic: string;
  research: string;
  outline: string;
  draft: string;
  final: string;
}
// #endregion flow

/** One agent, one task. Agents use the model named by CREWLINE_MODEL (e.g. `openai:gpt-4o-mini`). */
async function runCrew(
  role: string,
  description: string,
  expectedOutput: string,
  topic: string,
): Promise<string> {
  const agent = new Agent({
    role,
    goal: `Do the ${role.toLowerCase()} work on {topic}`,
    backstory: 'Thorough and concise',
  });
  const crew = new Crew({
    name: role.toLowerCase(),
    agents: [agent],
    tasks: [new Task({ description, expectedOutput, agent })],
  });
  const output = await crew.kickoff({ inputs: { topic } });
  return output.raw;
}

// Step 1 — `@persist()` on the class saves the state after every completed method, keyed by state.id.
// #region flow
@persist({ location: STATES_LOCATION })
export class ReportFlow extends Flow<ReportState> {
  initialState = { topic: 'ocean tides', research: '', outline: '', draft: '', final: '' };

  @start()
  async research() {
    this.state.research = await runCrew(
      'Researcher',
      'Collect facts about {topic}',
      'bullet points',
      this.state.topic,
    );
    return this.state.research;
  }

  @listen('research')
  async outline(research: string) {
    this.state.outline = await runCrew(
      'Planner',
      `Outline a report from these facts: ${research}`,
      'an outline',
      this.state.topic,
    );
    return this.state.outline;
  }

  @listen('outline')
  async draft(outline: string) {
    this.state.draft = await runCrew(
      'Writer',
      `Write a draft following this outline: ${outline}`,
      'a draft',
      this.state.topic,
    );
    return this.state.draft;
  }

  @listen('draft')
  async edit(draft: string) {
    this.state.final = await runCrew(
      'Editor',
      `Tighten this draft: ${draft}`,
      'the final report',
      this.state.topic,
    );
    return this.state.final;
  }
}
// #endregion flow

// Step 2 — run it under an id you choose (without one, read `result.stateId` afterwards).
// #region run-report
export async function runReport(id: string) {
  return new ReportFlow().kickoff({ inputs: { id } });
}
// #endregion run-report

// Step 3 — find saved states later, from code. (From a shell: `crewline checkpoint flows`.)
// #region saved-reports
export async function savedReports() {
  return ReportFlow.listStates(); // [{ id, flowName, lastMethod, status, updatedAt, reference, ... }]
}
// #endregion saved-reports

// Step 4 — after a crash or Ctrl+C, call runReport(id) again: finished methods are skipped.

// Step 5 — changed the code of a later step? Continue from the state saved after the last step you
// keep: only the steps after it run again.
// #region rerun-after
export async function rerunAfter(id: string, keepThrough: keyof ReportFlow & string) {
  const history = await listFlowStateHistory(STATES_LOCATION, id, { flowName: 'ReportFlow' });
  const point = history.filter((entry) => entry.lastMethod === keepThrough).at(-1);
  if (!point) return undefined; // nothing saved after that step yet
  const flow = await ReportFlow.fromCheckpoint({ restoreFrom: point.reference });
  return flow.kickoff();
}
// #endregion rerun-after

// The same in one call: re-run a step and everything after it; the steps before it are restored.
// #region rerun-from
export async function rerunFromStep(id: string, step: keyof ReportFlow & string) {
  return new ReportFlow().kickoff({ inputs: { id }, rerunFrom: step });
}
// #endregion rerun-from
