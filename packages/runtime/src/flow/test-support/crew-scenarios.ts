// A flow that runs two crews, for the resume tests (in process and across processes). Both crews
// keep the default name on purpose: their saved states are told apart by the order they ran in.
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { Task } from '../../task/task.js';
import { offlineModel } from '../../testing/index.js';
import { Flow, listen, start } from '../index.js';
import { executions, recordExecution } from './scenarios.js';

export { executions };

/** Shared by both crews, so `model.calls` counts every LLM call the flow makes in this process. */
export const model = offlineModel({ name: 'flow-crews' });

const record = recordExecution;

export class TwoCrewFlow extends Flow<{
  topic: string;
  research: string;
  article: string;
  writeAttempts: number;
}> {
  initialState = { topic: 'tides', research: '', article: '', writeAttempts: 0 };

  @start()
  async research() {
    record('research');
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research {topic}',
      backstory: 'Careful',
      llm: model,
    });
    const crew = new Crew({
      agents: [researcher],
      tasks: [
        new Task({
          description: 'Collect facts about {topic}',
          expectedOutput: 'bullets',
          agent: researcher,
        }),
        new Task({
          description: 'Rank the facts about {topic}',
          expectedOutput: 'ranked list',
          agent: researcher,
        }),
      ],
    });
    const output = await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus });
    this.state.research = output.raw;
    return output.raw;
  }

  @listen('research')
  async write(research: string) {
    record('write');
    // Changed before the crew runs: a checkpoint taken inside the crew must not keep this change,
    // or resuming (which runs this method again) would count the attempt twice.
    this.state.writeAttempts += 1;
    const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Clear', llm: model });
    const crew = new Crew({
      agents: [writer],
      tasks: [
        new Task({
          description: `Outline an article from: ${research.slice(0, 80)}`,
          expectedOutput: 'outline',
          agent: writer,
        }),
        new Task({
          description: 'Write the article about {topic}',
          expectedOutput: 'article',
          agent: writer,
        }),
        new Task({ description: 'Title the article about {topic}', expectedOutput: 'title', agent: writer }),
      ],
    });
    const output = await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus });
    this.state.article = output.raw;
    return output.raw;
  }
}
