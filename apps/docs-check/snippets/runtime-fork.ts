// Editing a task output on a fork, from packages/runtime/README.md, run by apps/docs-check.
import { Crew } from '@crewline/runtime';
import { writeTwoTaskCheckpoints } from './support/offline-crew.js';

await writeTwoTaskCheckpoints();

// #region fork
const branch = await Crew.fork({ restoreFrom: './.checkpoints' }, { branch: 'shorter-summary' });
branch.setTaskOutput(1, 'A shorter summary.');
await branch.kickoff({ inputs: { tone: 'dry' } });
// #endregion fork

console.log(`forked onto ${branch.lastRun?.state.lineage.branch}: ${branch.tasks[1]?.output?.raw}`);
