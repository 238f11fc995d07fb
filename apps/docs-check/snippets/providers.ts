// #region sqlite
import { SqliteProvider } from '@crewline/provider-sqlite';
// #endregion sqlite
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

const llm = offlineModel();
const agent = new Agent({ role: 'Analyst', goal: 'Answer', backstory: 'Expert', llm });
const agents = [agent];
// The two crews below share these and run one after the other (each kickoff starts the tasks afresh).
const tasks = [new Task({ description: 'Summarise {topic}', expectedOutput: 'one line', agent })];

// #region json
// JSON files (the default): one readable file per checkpoint in ./.checkpoints/<branch>/
const withJson = new Crew({ agents, tasks, checkpoint: true });
// #endregion json

// #region sqlite
// SQLite: one database file. The only change is the checkpoint option.
const withSqlite = new Crew({
  agents,
  tasks,
  checkpoint: { location: './.checkpoints.db', provider: new SqliteProvider() },
});
// #endregion sqlite

for (const crew of [withJson, withSqlite]) {
  await crew.kickoff({ inputs: { topic: 'storage' } });
  console.log(`${crew.lastRun?.state.provider?.kind}: ${crew.lastRun?.state.lineage.checkpointId}`);
}
