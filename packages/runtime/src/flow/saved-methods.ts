import { flowError } from './errors.js';
import type { FlowGraph } from './flow-graph.js';
import type { FlowExecution } from './run-progress.js';

/**
 * Refuses to continue a saved run whose due executions name methods the flow class no longer has
 * (renamed or removed since the checkpoint). Why refuse: skipping them ran nothing of the method,
 * nothing that listens to it either, and ended the flow "completed" with an empty result, a run
 * that looked finished and was not. Checked before the run starts, so nothing is written.
 */
export function refuseMissingMethods(flowName: string, graph: FlowGraph, execution: FlowExecution): void {
  const missing = [
    ...new Set(
      execution.pending.map((activation) => activation.method).filter((method) => !graph.nodes.has(method)),
    ),
  ];
  if (missing.length === 0) return;
  const names = missing.map((method) => `"${method}"`).join(', ');
  throw flowError(
    'invalid_state',
    `flow "${flowName}": the checkpoint has ${missing.length === 1 ? 'an execution' : 'executions'} of ${names} to run, which this flow class no longer has (renamed or removed since the checkpoint; its methods are ${[...graph.nodes.keys()].join(', ')}); continue with the code the checkpoint was taken with, give the method its old name back, or continue from a checkpoint taken before ${names} was due (or kick the flow off anew)`,
    { details: { flowName, missingMethods: missing } },
  );
}
