// A child process for the signal tests: a two-task crew checkpointing on '*' to a JSON location whose
// background writes are slow, that prints "ending" at its last event (crew_kickoff_completed, once
// that event's checkpoint is queued): the test then sends SIGTERM while the run's end waits for the
// queued writes. Usage: ending-child.ts <location>
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import type { CheckpointableEntity } from '@crewline/runtime-state';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';
import { Run } from '../run.js';
import { SlowJsonProvider } from './slow-json-provider.js';

const [location] = process.argv.slice(2) as [string];

const quiet: CheckpointableEntity = {
  entityKind: 'agent',
  entityId: 'setup',
  entityName: 'setup',
  snapshotEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup', data: {} }),
  summarizeEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup' }),
};
// Starting (and ending) an empty run installs the checkpoint listener first, so that the handler
// below sees the event after its checkpoint was queued.
await Run.execute({ root: quiet, config: undefined, inputs: {} }, async () => undefined);
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
