import { JsonProvider } from '@crewline/provider-json';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

// Any AI SDK model, or an id such as 'openai:gpt-4o-mini'; the offline model needs no key.
const llm = offlineModel();

const researcher = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'Expert', llm });
const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Expert', llm });
const crew = new Crew({
  agents: [researcher, writer],
  tasks: [
    new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent: researcher }),
    new Task({ description: 'Write a summary', expectedOutput: 'paragraph', agent: writer }),
  ],
  checkpoint: true, // a checkpoint in ./.checkpoints each time a task completes
});

const result = await crew.kickoff({ inputs: { topic: 'AI' } });
console.log(result.raw);

// What if the research had said something else? Fork this run's first checkpoint with an edited output:
const { lineageId } = crew.lastCheckpoint!; // the run's newest checkpoint: reference, id, lineageId, branch
const [afterResearch] = await new JsonProvider().list('./.checkpoints', { lineageId });
const whatIf = await Crew.fork({ restoreFrom: afterResearch!.reference }); // on a new branch, fork/<id>-<hex>
whatIf.setTaskOutput(0, 'One fact only: agents that checkpoint never redo finished work.');
const forked = await whatIf.kickoff(); // only the Writer runs; branch main is left as it was
console.log(`Research on ${whatIf.lastCheckpoint!.branch}: ${forked.tasksOutput[0]!.raw}`);
console.log(forked.raw);
