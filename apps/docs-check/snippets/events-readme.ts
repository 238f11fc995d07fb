// The code of packages/events/README.md, run by apps/docs-check (docs-snippets.test.ts).
import { readdirSync } from 'node:fs';
// #region subscribe
import { eventBus, LLMCallCompletedEvent, TaskCompletedEvent } from '@crewline/events';
// #endregion subscribe
import { Crew } from '@crewline/runtime';
import { agents, tasks } from './support/offline-crew.js';

// #region subscribe

// Two parameters: (source, event), both typed from the event class.
const off = eventBus.on(TaskCompletedEvent, (_source, event) => {
  console.log(`task done: ${event.description}`);
});

// Three parameters: the run's RuntimeState arrives as the third argument.
eventBus.on(LLMCallCompletedEvent, async (_source, _event, state) => {
  await state.acheckpoint('./my_checkpoints');
});
// #endregion subscribe

const crew = new Crew({ agents, tasks });
await crew.kickoff({ inputs: { topic: 'events' } });
// #region subscribe

off(); // unsubscribe
// #endregion subscribe
await crew.kickoff({ inputs: { topic: 'events' } }); // no "task done" line: that handler is gone
await eventBus.flush();
console.log(`files in my_checkpoints: ${readdirSync('./my_checkpoints', { recursive: true }).length}`);
