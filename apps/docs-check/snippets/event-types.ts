// The checkpoint trigger list of packages/events/README.md, run by apps/docs-check.
import type { CheckpointEventType } from '@crewline/events';
import { Crew } from '@crewline/runtime';
import { agents, tasks } from './support/offline-crew.js';

// #region on-events
const onEvents: CheckpointEventType[] = ['task_completed', 'llm_call_completed', 'SIGINT'];
// #endregion on-events

const crew = new Crew({ agents, tasks, checkpoint: { onEvents } });
await crew.kickoff({ inputs: { topic: 'triggers' } });
console.log(`checkpoints on ${onEvents.join(', ')}: ${crew.lastRun?.state.lineage.checkpointId}`);
