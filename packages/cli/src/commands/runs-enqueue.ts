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
 * queued, ending where the run id goes: the config registers runs but none under `name` (a typo, or a
 * crew the workers do not have), or an input nothing in the crew seems to use. Neither stops a run the CLI cannot judge: the machine that enqueues need not hold the
 * workers' code, and without a config here (or without `runs` in it) nothing can be said, so the run
 * is queued as asked.
 */
export async function checkEnqueue(
  name: string,
  inputs: Readonly<Record<string, unknown>>,
  cwd: string,
  command: string,
): Promise<string | undefined> {
  const file = findProjectConfigFile(cwd);
  if (file === undefined) return undefined;
  const config = (await loadProject(cwd)) as { runs?: unknown } | undefined;
  if (config?.runs === undefined) return undefined;
  const { RunRegistry } = await loadWorkerPackage();
  const registry = new RunRegistry(config.runs as ConstructorParameters<typeof RunRegistry>[0]);
  const entry = registry.get(name);
  if (entry !== undefined) return checkCrewInputs(entry, inputs, basename(file), command);
  const names = registry.names();
  return `crewline warn [runs] ${basename(file)} here registers no crew or flow named "${name}" (registered: ${names.join(', ') || 'none'}); it is queued for a worker whose config registers it: check the name, or cancel it with ${command} runs cancel`;
}

/**
 * Judges inputs by what is certain from the crew built here. A `{placeholder}` of its agents and
 * tasks that given inputs leave out fails the run at once in a worker (the runtime fills every
 * placeholder from the inputs, or none when there are no inputs), as does the factory's own
 * `invalid_argument`: both are refused. A key nothing here seems to use is only warned of, after the
 * run is queued: the runtime ignores it, and a task callback or a tool may read it later, which
 * building the crew cannot see. The crew is built once, as its factory builds it in a worker, with
 * `runId` empty and `attempt` 0; a key the factory reads, tests (`in`, `Object.hasOwn`) or lists
 * counts as used. A flow takes any inputs into its state, so nothing is said of a flow's.
 */
async function checkCrewInputs(
  entry: RegisteredRun,
  inputs: Readonly<Record<string, unknown>>,
  configName: string,
  command: string,
): Promise<string | undefined> {
  if (entry.kind !== 'crew') return undefined;
  const read = new Set<string>();
  let readAll = false;
  const record = (key: string | symbol) => {
    if (typeof key === 'string') read.add(key);
  };
  // Every trap through which a factory can learn of a key, so that one that tests or enumerates the
  // inputs instead of reading them is not taken for one that ignores them.
  const watched = new Proxy(
    { ...inputs },
    {
      get(target, key, receiver) {
        record(key);
        return Reflect.get(target, key, receiver);
      },
      has(target, key) {
        record(key);
        return Reflect.has(target, key);
      },
      getOwnPropertyDescriptor(target, key) {
        record(key);
        return Reflect.getOwnPropertyDescriptor(target, key);
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
    return undefined;
  }
  const placeholders = crewPlaceholders(crew);
  if (placeholders === undefined) return undefined;
  const keys = Object.keys(inputs);
  if (keys.length === 0 && placeholders.size > 0)
    return noInputsWarning(entry.name, placeholders, configName, command);
  if (keys.length > 0) {
    const missing = [...placeholders].find((key) => !Object.hasOwn(inputs, key));
    if (missing !== undefined) {
      const near = nearestName(
        missing,
        keys.filter((key) => !placeholders.has(key)),
      );
      throw usageError(
        `crew "${entry.name}" of ${configName} uses {${missing}} but the inputs have no "${missing}"; ${near === undefined ? `add --input ${missing}=…` : `did you mean --input ${missing}=… instead of --input ${near}=…?`}; nothing was queued`,
      );
    }
  }
  if (readAll) return undefined;
  const unused = keys.filter((key) => !placeholders.has(key) && !read.has(key));
  if (unused.length === 0) return undefined;
  const known = [...placeholders].sort();
  const described = unused.map((key) => {
    const near = nearestName(key, known);
    return near === undefined ? `"${key}"` : `"${key}" (did you mean {${near}}?)`;
  });
  const [input, isNo, them] =
    unused.length === 1 ? ['input', 'is no placeholder', 'it'] : ['inputs', 'are no placeholders', 'them'];
  return `crewline warn [runs] ${input} ${described.join(', ')} ${isNo} of crew "${entry.name}" of ${configName} and its factory does not read ${them} (placeholders: ${known.map((key) => `{${key}}`).join(', ') || 'none'}); a task callback or a tool may read ${them}, and the runtime ignores an input nothing uses, so the run is queued: check the spelling, or cancel it with ${command} runs cancel`;
}

/**
 * A crew with placeholders queued with no inputs at all: the runtime leaves every placeholder as
 * written then (it fills them only from inputs given), so its model calls are paid for prompts that
 * say "{topic}". Not refused: a crew may mean its braces literally, and the worker runs it as asked.
 */
function noInputsWarning(
  name: string,
  placeholders: ReadonlySet<string>,
  configName: string,
  command: string,
): string {
  const sorted = [...placeholders].sort();
  const listed = sorted.map((key) => `{${key}}`).join(', ');
  const [it, gives] = sorted.length === 1 ? ['it', 'gives it'] : ['them', 'gives them'];
  const flags = sorted.map((key) => `--input ${key}=…`).join(' ');
  return `crewline warn [runs] crew "${name}" of ${configName} uses ${listed} and no --input ${gives} a value: with no inputs at all the runtime leaves every placeholder as written, so the model reads ${sorted.map((key) => `"{${key}}"`).join(', ')} literally; pass ${it} with ${flags}, or cancel the run with ${command} runs cancel`;
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
