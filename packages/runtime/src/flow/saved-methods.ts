import { flowError } from './errors.js';
import type { FlowGraph } from './flow-graph.js';
import type { FlowExecution } from './run-progress.js';

/**
 * Refuses to continue a saved run whose due executions name methods the flow class no longer has
 * (renamed or removed since the checkpoint). Why refuse: skipping them ran nothing of the method,
 * nothing that listens to it either, and ended the flow "completed" with an empty result, a run
 * that looked finished and was not. Checked before the run starts, so nothing is written.
 */
export function refuseMissingMethods(
  flowName: string,
  graph: FlowGraph,
  execution: FlowExecution,
  /** The state id, when the flow continues a persisted state (loaded by its id). */
  persistedId?: string,
): void {
  const missing = [
    ...new Set(
      execution.pending.map((activation) => activation.method).filter((method) => !graph.nodes.has(method)),
    ),
  ];
  if (missing.length === 0) return;
  const names = missing.map((method) => `"${method}"`).join(', ');
  // A persisted state is loaded by its id at every kickoff: "kick it off anew" would load it again.
  const elsewhere =
    persistedId === undefined
      ? `continue from a checkpoint taken before ${names} was due (or kick the flow off anew)`
      : `re-run state "${persistedId}" from an earlier method that still exists, where a save comes before it (kickoff({ inputs: { id: '${persistedId}' }, rerunFrom: '<method>' }), crewline checkpoint flows rerun ${persistedId} --from <method>), or start a new state under another id (kicked off by this id, the state is loaded again)`;
  throw flowError(
    'invalid_state',
    `flow "${flowName}": the checkpoint has ${missing.length === 1 ? 'an execution' : 'executions'} of ${names} to run, which this flow class no longer has (renamed or removed since the checkpoint; its methods are ${[...graph.nodes.keys()].join(', ')}); continue with the code the checkpoint was taken with, give the method its old name back, or ${elsewhere}`,
    { details: { flowName, missingMethods: missing } },
  );
}
