// Editing a task output on a fork, from packages/runtime/README.md, run by apps/docs-check.
import { Crew } from '@crewline/runtime';
import { writeTwoTaskCheckpoints } from './support/offline-crew.js';

await writeTwoTaskCheckpoints();

// #region fork
const branch = await Crew.fork({ restoreFrom: './.checkpoints' }, { branch: 'shorter-research' });
branch.setTaskOutput(0, 'One fact only: AI needs data.'); // tasks count from 0: the research
await branch.kickoff({ inputs: { tone: 'dry' } }); // the summary is written again, in a dry tone
// #endregion fork

const summary = branch.tasks[1]?.output;
console.log(`forked onto ${branch.lastCheckpoint?.branch}: ${branch.tasks[0]?.output?.raw}`);
console.log(`summary written again on the fork: ${summary?.description}`);
