// continueFromCheckpoint from packages/runtime/README.md, run by apps/docs-check.
// #region continue
import { continueFromCheckpoint } from '@crewline/runtime';
// #endregion continue
import { writeTwoTaskCheckpoints } from './support/offline-crew.js';

await writeTwoTaskCheckpoints();

// #region continue

const result = await continueFromCheckpoint({
  reference: './.checkpoints', // or a file, db#id, an id prefix with defaultLocation
  mode: 'fork', // or 'resume'
  branch: 'what-if', // fork only; generated when omitted
  inputs: { topic: 'robots' }, // re-templates pending tasks
  taskOutputs: { 0: 'edited' }, // flat task index across the checkpoint's crews → new output
  onEvent: (event) => console.log(event.type),
});
// { kind: 'crew', name, output, branch, lastCheckpoint }
// #endregion continue

console.log(`continued: ${result.kind} on ${result.branch}`);
