// A child process for the signal tests: a two-task crew checkpointing on '*' to a JSON location whose
// background writes are slow, that prints "ending" at its last event (crew_kickoff_completed, once
// that event's checkpoint is queued): the test then sends SIGTERM while the run's end waits for the
// queued writes. Usage: ending-child.ts <location>
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';
import { installCheckpointListenerFirst } from './checkpoint-listener-first.js';
import { SlowJsonProvider } from './slow-json-provider.js';

const [location] = process.argv.slice(2) as [string];

// The checkpoint listener first, so that the handler below sees each event after its checkpoint.
await installCheckpointListenerFirst();
eventBus.onAny((_source: unknown, event: BaseEvent) => {
  if (event.type === 'crew_kickoff_completed') writeSync(1, 'ending\n');
});
const llm = offlineModel();
const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });
await new Crew({
  tasks: [
    new Task({ description: 'first', expectedOutput: 'y', agent }),
    new Task({ description: 'second', expectedOutput: 'y', agent }),
  ],
  checkpoint: { provider: new SlowJsonProvider(400), location, onEvents: ['*'] },
}).kickoff();
writeSync(1, 'ended\n');
