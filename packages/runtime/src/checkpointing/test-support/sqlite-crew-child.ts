// A child process for the SQLite way-out tests: a three-task crew whose checkpoint config names only
// a `.db` location, so the runtime's built-in registry opens the SQLite provider (no registry or
// provider passed), checkpointing on every event; each model call takes 150 ms.
// Usage: sqlite-crew-child.ts <location> <end>
//   end  signal       prints "ready" once the first task completed; the test's SIGINT ends it
//        signal-own   the same, the config passing a SqliteProvider the program made (no registry)
//        signal-exit  the same, with an application SIGINT handler that calls process.exit(7)
//        exit         calls process.exit(0) once kickoff returned
//        return       lets the process end on its own once kickoff returned
import { writeSync } from 'node:fs';
import { type BaseEvent, eventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';

const [location, end] = process.argv.slice(2) as [string, string];
const llm = offlineModel({ name: 'way-out', latencyMs: 150 });
const agent = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'B', llm });
const crew = new Crew({
  name: 'way-out',
  agents: [agent],
  tasks: ['one', 'two', 'three'].map(
    (step) => new Task({ description: `research ${step}`, expectedOutput: 'notes', agent }),
  ),
  checkpoint: {
    location,
    onEvents: ['*'],
    ...(end === 'signal-own' ? { provider: new SqliteProvider() } : {}),
  },
});
if (end === 'signal-exit') process.on('SIGINT', () => process.exit(7));
if (end === 'signal' || end === 'signal-own' || end === 'signal-exit') {
  let told = false;
  eventBus.onAny((_source: unknown, event: BaseEvent) => {
    if (event.type !== 'task_completed' || told) return;
    told = true;
    writeSync(1, 'ready\n');
  });
}
await crew.kickoff();
writeSync(1, 'finished\n');
if (end === 'exit') process.exit(0);
