import { type FlowClass, projectRegistry } from '../project-config/project-config.js';

/**
 * The name a flow class is registered under in the project registry (`crewline.config.ts`
 * `flows: { name: FlowClass }`), if it is registered. Checkpoints store this name, never a path.
 */
export function registeredFlowName(flowClass: FlowClass): string | undefined {
  return projectRegistry().flowName(flowClass);
}
