// A child process for the exit test: a crew checkpointing on '*' to a JSON location whose background
// writes are slow, and a handler that calls process.exit(0) right after the first event of the given
// type (once its checkpoint was queued). Usage: exit-child.ts <location> <eventType>
// Prints `exiting {"events":[...],"onDisk":n,"pending":n}` (the checkpointed events so far, the files on
// disk and the writes in flight at that moment) just before it exits.
import { writeSync } from 'node:fs';
import { type BaseEvent, checkpointLifecycleEventTypes, eventBus } from '@crewline/events';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { checkpointFiles } from '../../e2e/support/fixtures.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';
import { installCheckpointListenerFirst } from './checkpoint-listener-first.js';
import { SlowJsonProvider } from './slow-json-provider.js';

const [location, exitAfter] = process.argv.slice(2) as [string, string];
const lifecycle = new Set<string>(checkpointLifecycleEventTypes);

// The checkpoint listener first, so that the handler below sees each event after its checkpoint.
await installCheckpointListenerFirst();
const provider = new SlowJsonProvider(300);
const events: string[] = [];
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (lifecycle.has(event.type)) return;
  events.push(event.type);
  if (event.type !== exitAfter) return;
  const report = { events, onDisk: checkpointFiles(location).length, pending: provider.pending };
  writeSync(1, `exiting ${JSON.stringify(report)}\n`);
  process.exit(0);
});
const llm = offlineModel();
const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
await new Crew({
  tasks: [
    new Task({ description: 'first', expectedOutput: 'y', agent }),
    new Task({ description: 'second', expectedOutput: 'y', agent }),
  ],
  checkpoint: { provider, location, onEvents: ['*'] },
}).kickoff();
writeSync(1, 'done without exiting\n');
