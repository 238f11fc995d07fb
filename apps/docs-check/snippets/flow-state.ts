// The code of docs/flow-state-persistence.md, run by apps/docs-check (docs-snippets.test.ts).
import { Agent, Crew, Flow, listen, persist, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

const llm = offlineModel(); // stands in for a real model: it records every call it gets
let networkIsDown = true; // the first run dies in the third step, the way a long run does

/** One step = one crew: one agent, one task. */
async function runCrew(role: string, description: string, topic: string): Promise<string> {
  if (role === 'Writer' && networkIsDown) throw new Error('connection reset while writing');
  const agent = new Agent({ role, goal: `Do the ${role} work`, backstory: 'Careful', llm });
  const task = new Task({ description, expectedOutput: 'a short text', agent });
  const output = await new Crew({ name: role, agents: [agent], tasks: [task] }).kickoff({
    inputs: { topic },
  });
  return output.raw;
}

// #region flow
interface ReportState {
  topic: string;
  research: string;
  outline: string;
  draft: string;
}

@persist() // saves the state after every completed method, keyed by state.id, in ./.checkpoints
class ReportFlow extends Flow<ReportState> {
  initialState = { topic: 'tides', research: '', outline: '', draft: '' };

  @start()
  async research() {
    this.state.research = await runCrew('Researcher', 'Collect facts about {topic}', this.state.topic);
    return this.state.research;
  }

  @listen('research')
  async outline() {
    this.state.outline = await runCrew('Planner', 'Outline a report on {topic}', this.state.topic);
    return this.state.outline;
  }

  @listen('outline')
  async write() {
    this.state.draft = await runCrew('Writer', 'Write the report on {topic}', this.state.topic);
    return this.state.draft;
  }
}
// #endregion flow

// #region first-run
try {
  await new ReportFlow().kickoff({ inputs: { id: 'tides-report' } });
} catch (error) {
  console.log(`first run stopped: ${(error as Error).message}`); // after research and outline
}
// #endregion first-run

// #region list-states
const states = await ReportFlow.listStates();
for (const saved of states) {
  console.log(`${saved.id}: ${saved.flowName}, last completed ${saved.lastMethod}, ${saved.status}`);
}
// -> tides-report: ReportFlow, last completed outline, running
// #endregion list-states

networkIsDown = false;
const callsBefore = llm.calls.length;

// #region restore
const result = await new ReportFlow().kickoff({ inputs: { id: 'tides-report' } });
console.log(result.completedMethods); // [ 'research', 'outline', 'write' ]
console.log(result.state.draft.split('\n')[0]); // only `write` ran in this kickoff
// #endregion restore

console.log(`model calls in the second run: ${llm.calls.length - callsBefore}`);
