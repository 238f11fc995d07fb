// The code of packages/provider-sqlite/README.md, run by apps/docs-check (docs-snippets.test.ts).
import { existsSync } from 'node:fs';
// #region crew
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Crew } from '@crewline/runtime';
// #endregion crew
import { agents, tasks } from './support/offline-crew.js';

// #region crew

const crew = new Crew({
  agents,
  tasks,
  checkpoint: { location: './.checkpoints', provider: new SqliteProvider(), onEvents: ['*'] },
});
await crew.kickoff({ inputs: { topic: 'AI' } }); // writes ./.checkpoints.db
const id = crew.lastRun?.state.lineage.checkpointId; // e.g. 20261121T093004511-a0c4e2d9

// Resume from the latest checkpoint of that database, or from one of them:
await crew.kickoff({ fromCheckpoint: { restoreFrom: './.checkpoints.db' } });
await crew.kickoff({ fromCheckpoint: { restoreFrom: `./.checkpoints.db#${id}` } });
// #endregion crew

console.log(`database written: ${existsSync('./.checkpoints.db')}, resumed from ${id}`);
