// The code of packages/provider-json/README.md, run by apps/docs-check (docs-snippets.test.ts).
// #region crew
import { JsonProvider } from '@crewline/provider-json';
import { Crew } from '@crewline/runtime';
// #endregion crew
import { agents, tasks } from './support/offline-crew.js';

// #region crew

const crew = new Crew({
  agents,
  tasks,
  checkpoint: { location: './.checkpoints', provider: new JsonProvider({ fsync: true }) },
});
// #endregion crew

await crew.kickoff({ inputs: { topic: 'files' } });
console.log(`${crew.lastRun?.state.provider?.kind}: ${crew.lastRun?.state.lineage.checkpointId}`);
