import { basename } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { findProjectConfigFile } from '@crewline/runtime/internal';
import { findPlaceholders, nearestName } from '@crewline/runtime-state/internal';
import { usageError } from '../core/cli-error.js';
import { describeKnownError } from '../core/error-boundary.js';
import { loadProject } from '../core/project-config.js';
import { loadWorkerPackage } from './worker-package.js';

type RegisteredRun = import('@crewline/worker').RegisteredRun;

/**
 * What `crewline runs enqueue` can say of a run before it is queued, from the project's own config:
 * a refusal (exit code 2) of inputs its registered crew cannot run, or a warning to print once it is
 * queued when the config registers runs but none under `name` (a typo, or a crew the workers do not
 * have). Neither stops a run the CLI cannot judge: the machine that enqueues need not hold the
 * workers' code, and without a config here (or without `runs` in it) nothing can be said, so the run
 * is queued as asked.
 */
export async function checkEnqueue(
  name: string,
  inputs: Readonly<Record<string, unknown>>,
  cwd: string,
): Promise<string | undefined> {
  const file = findProjectConfigFile(cwd);
  if (file === undefined) return undefined;
  const config = (await loadProject(cwd)) as { runs?: unknown } | undefined;
  if (config?.runs === undefined) return undefined;
  const { RunRegistry } = await loadWorkerPackage();
  const registry = new RunRegistry(config.runs as ConstructorParameters<typeof RunRegistry>[0]);
  const entry = registry.get(name);
  if (entry !== undefined) {
    await checkCrewInputs(entry, inputs, basename(file));
    return undefined;
  }
  const names = registry.names();
  return `crewline warn [runs] ${basename(file)} here registers no crew or flow named "${name}" (registered: ${names.join(', ') || 'none'}); it is queued for a worker whose config registers it: check the name, or cancel it with crewline runs cancel`;
}

/**
 * Refuses inputs a worker would fail the run for at once: a key the crew never reads (a typo that
 * changes nothing), or, when inputs are given, a `{placeholder}` of its agents and tasks without one
 * (the runtime fills every placeholder from the inputs, or none when there are no inputs). The crew
 * is built here once, as its factory builds it in a worker, with `runId` empty and `attempt` 0; a
 * key the factory reads from `inputs` itself counts as used, and a factory that reads them all (a
 * spread, `Object.keys`), throws, or returns no crew leaves the inputs unjudged. A flow takes any
 * inputs into its state, so nothing is said of a flow's.
 */
async function checkCrewInputs(
  entry: RegisteredRun,
  inputs: Readonly<Record<string, unknown>>,
  configName: string,
): Promise<void> {
  if (entry.kind !== 'crew') return;
  const read = new Set<string>();
  let readAll = false;
  const watched = new Proxy(
    { ...inputs },
    {
      get(target, key, receiver) {
        if (typeof key === 'string') read.add(key);
        return Reflect.get(target, key, receiver);
      },
      has(target, key) {
        if (typeof key === 'string') read.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        readAll = true;
        return Reflect.ownKeys(target);
      },
    },
  );
  let crew: unknown;
  try {
    crew = await entry.build({ runId: '', inputs: watched, attempt: 0 });
  } catch (error) {
    // The factory's documented refusal of inputs it cannot run fails the run at once in a worker.
    if (CrewlineError.hasCode(error, 'invalid_argument')) {
      throw usageError(
        `crew "${entry.name}" of ${configName} refuses these inputs: ${describeKnownError(error)}; nothing was queued`,
      );
    }
    return;
  }
  const used = crewPlaceholders(crew);
  if (used === undefined || readAll) return;
  const unknown = Object.keys(inputs).find((key) => !used.has(key) && !read.has(key));
  if (unknown !== undefined) {
    const known = [...new Set([...used, ...read])].sort();
    const near = nearestName(unknown, known);
    throw usageError(
      `input "${unknown}" is not one crew "${entry.name}" of ${configName} uses (it uses: ${known.join(', ') || 'none'})${near ? `; did you mean --input ${near}=…?` : '; check its spelling'}; nothing was queued`,
    );
  }
  if (Object.keys(inputs).length === 0) return;
  const missing = [...used].find((key) => !Object.hasOwn(inputs, key));
  if (missing !== undefined) {
    throw usageError(
      `crew "${entry.name}" of ${configName} uses {${missing}} but the inputs have no "${missing}"; add --input ${missing}=…; nothing was queued`,
    );
  }
}

/** The `{placeholder}`s of a built crew's agents and tasks, or `undefined` when it is not a crew. */
function crewPlaceholders(crew: unknown): Set<string> | undefined {
  const { agents, tasks, manager } = (crew ?? {}) as {
    agents?: unknown;
    tasks?: unknown;
    manager?: unknown;
  };
  if (!Array.isArray(agents) || !Array.isArray(tasks)) return undefined;
  const templates: unknown[] = [];
  for (const agent of [...agents, manager, ...tasks.map((task) => (task as { agent?: unknown })?.agent)]) {
    const { role, goal, backstory } = (agent ?? {}) as Record<string, unknown>;
    templates.push(role, goal, backstory);
  }
  for (const task of tasks) {
    const { description, expectedOutput } = (task ?? {}) as Record<string, unknown>;
    templates.push(description, expectedOutput);
  }
  return new Set(
    templates.flatMap((template) => (typeof template === 'string' ? findPlaceholders(template) : [])),
  );
}
