// A crew in a flow handed a database address from outside the flow's state (a closure, the
// environment), whose password the crew's saved inputs hold as [REDACTED]: on resume its method hands
// the same address again, which is no change, so its interrupted task continues, as the plan says
// (review RG-2: the plan said continue and the crew started over, paying again).
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { lookupTool, toolUsingModel } from '../e2e/support/fixtures.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { Flow, start } from './index.js';

const db = 'postgres://admin:Sup3rS3cretPassw0rd@db.internal/app';
const model = toolUsingModel();

class Report extends Flow<{ topic: string }> {
  initialState = { topic: 'kelp' };
  @start() async write() {
    const agent = new Agent({
      role: 'Researcher',
      goal: 'Research',
      backstory: 'Calm',
      llm: model,
      tools: [lookupTool],
    });
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'Research {topic}', expectedOutput: 'notes', agent })],
    });
    return (await crew.kickoff({ inputs: { topic: this.state.topic, db }, bus: this.bus })).raw;
  }
}

it('continues the interrupted task of a crew handed its address again, as planned', async () => {
  const provider = new InMemoryProvider();
  const logs = captureLogs();
  try {
    await new Report({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const first = (await provider.list('mem')).find((each) => each.trigger === 'llm_call_completed')!;
    const document = await readDocument(provider, 'mem', first.id);
    expect(interruptedTasksOutcome(document, undefined)).toEqual({ action: 'continue' });
    model.reset();
    const restored = await Report.fromCheckpoint(
      { restoreFrom: `mem#${first.id}`, provider },
      { bus: new EventBus() },
    );
    await restored.kickoff();
    // The tool runs, then one call for the answer: the saved call is not made again.
    expect(model.calls).toHaveLength(1);
    expect(logs.records.filter((record) => record.message.includes('interrupted'))).toEqual([]);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
});
