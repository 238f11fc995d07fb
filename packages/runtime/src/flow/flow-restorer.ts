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
 * module path; an unregistered flow gives a `not_rebuildable` error saying what to register. With
 * `humanInput` a paused flow continues with that answer; without it a paused flow asks again and the
 * result says what it waits for.
 */
export const restoreFlow: EntityRestorer = async (request) => {
  const flowClass = registeredClassFor(
    request.loaded,
    request.snapshot.name,
    request.registry,
  ) as RestorableFlowClass;
  const flow = await flowClass.fromLoaded(
    request.loaded,
    request.onConflict !== undefined ? { onConflict: request.onConflict } : {},
    request.bus ? { bus: request.bus } : {},
    request.mode === 'fork' ? { fork: { branch: request.branch } } : {},
  );
  const inputs = request.inputs ? { inputs: request.inputs } : {};
  const result =
    request.humanInput !== undefined
      ? await flow.resume(request.humanInput, inputs)
      : await flow.kickoff(inputs);
  if (result.status === 'paused') {
    const { methodName, message, kind, resumeFrom } = result.pause;
    return {
      output: `paused in ${methodName}: ${message}`,
      pause: { methodName, message, kind, ...(resumeFrom !== undefined ? { resumeFrom } : {}) },
    };
  }
  const output = result.output;
  return { output: typeof output === 'string' ? output : JSON.stringify(toJsonSafe(output) ?? null) };
};
