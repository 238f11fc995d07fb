// The public surface of @crewline/runtime. Other parts of the package append their exports here.
export { Run, type RunOptions } from './checkpointing/run.js';
