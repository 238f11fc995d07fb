import { basename } from 'node:path';
import { findProjectConfigFile } from '@crewline/runtime/internal';
import { loadProject } from '../core/project-config.js';
import { loadWorkerPackage } from './worker-package.js';

/**
 * A warning when the project's own config registers runs but none under `name`: a typo, or a crew
 * the workers do not have, would be queued and fail only when a worker takes it. Not a refusal — the
 * machine that enqueues need not hold the workers' code, and without a config here (or without
 * `runs` in it) nothing can be said — so the run is queued and the warning says how to undo it.
 */
export async function unregisteredRunWarning(name: string, cwd: string): Promise<string | undefined> {
  const file = findProjectConfigFile(cwd);
  if (file === undefined) return undefined;
  const config = (await loadProject(cwd)) as { runs?: unknown } | undefined;
  if (config?.runs === undefined) return undefined;
  const { RunRegistry } = await loadWorkerPackage();
  const registry = new RunRegistry(config.runs as ConstructorParameters<typeof RunRegistry>[0]);
  if (registry.get(name) !== undefined) return undefined;
  const names = registry.names();
  return `crewline warn [runs] ${basename(file)} here registers no crew or flow named "${name}" (registered: ${names.join(', ') || 'none'}); it is queued for a worker whose config registers it: check the name, or cancel it with crewline runs cancel`;
}
