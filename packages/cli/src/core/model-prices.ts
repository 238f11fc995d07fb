import { type ModelPrices, parseModelPrices } from '@crewline/runtime-state';
import type { CliContext } from './cli-context.js';
import { loadProject } from './project-config.js';

/**
 * The `modelPrices` of the project's crewline.config.ts, which `checkpoint info`, the explorer and
 * `runs show` price tokens with; none (every real model's cost unknown) when the project has no config.
 */
export async function modelPricesOf(context: Pick<CliContext, 'cwd'>): Promise<ModelPrices> {
  const config = await loadProject(context.cwd);
  return parseModelPrices(config?.modelPrices, 'crewline.config.ts: modelPrices');
}
