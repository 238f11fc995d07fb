import { toJsonSafe } from '@crewline/runtime-state';
import type { EntityRestorer } from '../resume/entity-restorers.js';
import type { Flow } from './flow.js';
import { registeredClassFor } from './flow-snapshot.js';
import type { FlowConstructor } from './flow-types.js';

type RestorableFlowClass = FlowConstructor & {
  fromLoaded: (...args: Parameters<typeof Flow.fromLoaded>) => ReturnType<typeof Flow.fromLoaded>;
};

/**
 * Continues a flow checkpoint for the CLI and TUI (`continueFromCheckpoint`): the class is found by
 * the name stored in the checkpoint in the project registry (`crewline.config.ts` `flows`), never by a
 * module path; an unregistered flow gives a `not_rebuildable` error saying what to register.
 */
export const restoreFlow: EntityRestorer = async (request) => {
  const flowClass = registeredClassFor(
    request.loaded,
    request.snapshot.name,
    request.registry,
  ) as RestorableFlowClass;
  const flow = await flowClass.fromLoaded(
    request.loaded,
    {},
    request.bus ? { bus: request.bus } : {},
    request.mode === 'fork' ? { fork: { branch: request.branch } } : {},
  );
  const result = await flow.kickoff(request.inputs ? { inputs: request.inputs } : {});
  if (result.status === 'paused') {
    return { output: `paused in ${result.pause.methodName}: ${result.pause.message} (${result.pause.hint})` };
  }
  const output = result.output;
  return { output: typeof output === 'string' ? output : JSON.stringify(toJsonSafe(output) ?? null) };
};
