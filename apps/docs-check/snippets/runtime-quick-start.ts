// The opening example of packages/runtime/README.md. Compiled, not run: it calls OpenAI (the offline
// version of the same crew is snippets/quick-start.ts, which runs).
// #region quick-start
import { Agent, Crew, Task } from '@crewline/runtime';

const researcher = new Agent({
  role: 'Researcher',
  goal: 'Research {topic}',
  backstory: 'Expert',
  llm: 'openai:gpt-4o-mini',
});
const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Expert', llm: 'openai:gpt-4o-mini' });

const crew = new Crew({
  agents: [researcher, writer],
  tasks: [
    new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent: researcher }),
    new Task({ description: 'Write a summary', expectedOutput: 'paragraph', agent: writer }),
  ],
  checkpoint: true, // ./.checkpoints, one checkpoint per finished task
});

const result = await crew.kickoff({ inputs: { topic: 'AI' } });
console.log(result.raw, result.tokenUsage);

// Ctrl+C, a crash, a failed call... then, in any process:
await crew.kickoff({ fromCheckpoint: { restoreFrom: './.checkpoints' } }); // its latest checkpoint
// #endregion quick-start
