import { flowError } from './errors.js';
import type { FlowGraph } from './flow-graph.js';
import type { FlowExecution } from './run-progress.js';

/**
 * Refuses to continue a saved run that names methods the flow class no longer has (renamed or
 * removed since the checkpoint): executions due to run, or, while the run is unfinished, methods it
 * completed. Why refuse: a due execution skipped ran nothing of the method, nothing that listens to
 * it either, and ended the flow "completed" with an empty result; a completed method renamed never
 * fires what now listens to its new name (a join on it waits forever, and the flow ends early). A
 * run that looked finished and was not. Checked before the run starts, so nothing is written.
 */
export function refuseMissingMethods(
  flowName: string,
  graph: FlowGraph,
  execution: FlowExecution,
  /** The state id, when the flow continues a persisted state (loaded by its id). */
  persistedId?: string,
): void {
  const absent = (methods: readonly string[]) => [
    ...new Set(methods.filter((method) => !graph.nodes.has(method))),
  ];
  const due = absent(execution.pending.map((activation) => activation.method));
  // A finished run kicked off again starts from its start methods: what it completed no longer fires.
  const completed = execution.pending.length > 0 ? absent(execution.completedMethods) : [];
  if (due.length === 0 && completed.length === 0) return;
  const quoted = (methods: readonly string[]) => methods.map((method) => `"${method}"`).join(', ');
  const names = quoted([...due, ...completed]);
  const held = [
    ...(due.length > 0
      ? [`has ${due.length === 1 ? 'an execution' : 'executions'} of ${quoted(due)} to run`]
      : []),
    ...(completed.length > 0
      ? [`completed ${quoted(completed)}, whose listeners would never run (nor a join waiting on it)`]
      : []),
  ].join(' and ');
  // A persisted state is loaded by its id at every kickoff: "kick it off anew" would load it again.
  const elsewhere =
    persistedId === undefined
      ? `continue from a checkpoint taken before ${names} ran (or kick the flow off anew)`
      : `re-run state "${persistedId}" from an earlier method that still exists, where a save comes before it (kickoff({ inputs: { id: '${persistedId}' }, rerunFrom: '<method>' }), crewline checkpoint flows rerun ${persistedId} --from <method>), or start a new state under another id (kicked off by this id, the state is loaded again)`;
  throw flowError(
    'invalid_state',
    `flow "${flowName}": the checkpoint ${held}, which this flow class no longer has (renamed or removed since the checkpoint; its methods are ${[...graph.nodes.keys()].join(', ')}); continue with the code the checkpoint was taken with, give the method its old name back, or ${elsewhere}`,
    { details: { flowName, missingMethods: [...due, ...completed] } },
  );
}
