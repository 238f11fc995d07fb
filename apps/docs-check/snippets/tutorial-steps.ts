// The code of docs/tutorial.md, run by apps/docs-check (docs-snippets.test.ts). The demo in
// apps/tutorial does the same with progress output, a real Ctrl+C and a choice of storage; here the
// run stops the other way a long run does: a model call fails.
import { readdirSync } from 'node:fs';
// #region create
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

// The second model call fails, as a real one sometimes does (rate limit, network, timeout).
const llm = offlineModel({ name: 'tutorial', failOn: [2] });

const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Expert', llm });
const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Expert', llm });

const crew = new Crew({
  agents: [researcher, writer],
  tasks: [
    new Task({ description: 'Research AI trends', agent: researcher, expectedOutput: 'bullets' }),
    new Task({ description: 'Write a summary', agent: writer, expectedOutput: 'paragraph' }),
  ],
  checkpoint: true,
});
// #endregion create

try {
  // #region run
  const result = await crew.kickoff();
  // #endregion run
  console.log(`not stopped: ${result.raw}`);
} catch (error) {
  console.log(`stopped: ${(error as Error).message}`);
}

const checkpointFile = `./.checkpoints/main/${readdirSync('./.checkpoints/main')[0]}`;
const callsBefore = llm.calls.length;

// #region resume
const resumed = await crew.kickoff({ fromCheckpoint: { restoreFrom: checkpointFile } });
// #endregion resume
console.log(`resumed with ${llm.calls.length - callsBefore} model call: ${resumed.raw.split('\n')[0]}`);

// #region fork
const experiment = await Crew.fork({ restoreFrom: checkpointFile }, { branch: 'experiment-a' });
experiment.setTaskOutput(0, '- agents checkpoint their work\n- forks make what-ifs cheap');
const forked = await experiment.kickoff(); // the Writer runs again; branch main is not touched
// #endregion fork
console.log(`forked onto ${experiment.lastRun?.state.lineage.branch}: ${forked.raw.split('\n')[0]}`);
