// A child process for the exit test of signals.test.ts: a crew checkpointing to a JSON directory whose
// agent checkpoints to a SQLite `.db` of its own (a second location) with group commit, through a
// provider the runtime's built-in registry made (as a restore rebuilds one a checkpoint names), and a
// handler that calls process.exit(0) as the agent's second model call starts, once its checkpoint
// was queued for SQLite's background write.
// Usage: second-location-exit-child.ts <directory> <database>
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';
import { builtinRegistry } from '../provider-registry.js';
import { installCheckpointListenerFirst } from './checkpoint-listener-first.js';

const [directory, database] = process.argv.slice(2) as [string, string];

// The checkpoint listener first, so that the handler below sees each event after its checkpoint.
await installCheckpointListenerFirst();
const provider = await builtinRegistry.rebuild('sqlite', { groupCommit: true });
let calls = 0;
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event.type !== 'llm_call_started') return;
  calls += 1;
  if (calls < 2) return;
  writeSync(1, 'exiting\n');
  process.exit(0);
});
const llm = offlineModel({ name: 'second-location' });
const agent = new Agent({
  role: 'Researcher',
  goal: 'Research',
  backstory: 'B',
  llm,
  checkpoint: { location: database, provider, onEvents: ['*'] },
});
await new Crew({
  agents: [agent],
  tasks: ['one', 'two', 'three'].map(
    (step) => new Task({ description: `research ${step}`, expectedOutput: 'notes', agent }),
  ),
  checkpoint: { location: directory, onEvents: ['*'] },
}).kickoff();
writeSync(1, 'done without exiting\n');
