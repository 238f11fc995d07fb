import type { Crew, FlowClass } from '@crewline/runtime';
import { workerError } from './errors.js';
import type { RunKind } from './run-record.js';

/** What a factory is told about the run it builds for. */
export interface RunContext {
  /** The run's id in the queue. */
  runId: string;
  /** The inputs the run was enqueued with. */
  inputs: Record<string, unknown>;
  /** Which attempt this is (1 for the first). */
  attempt: number;
}

/**
 * Builds the crew of one run. Called once per attempt, in the worker that runs it; the crew must be
 * the same for the same inputs in every worker (a resumed attempt continues the saved one). Throw a
 * `CrewlineError` with `invalid_argument` for inputs it cannot run: the run fails at once, unretried.
 * `crewline runs enqueue` calls it too, once, before the run is queued (`runId` `''`, `attempt` `0`),
 * to refuse inputs its placeholders need and lack (and warn of those nothing seems to use): keep it
 * free of side effects.
 */
export type CrewFactory = (context: RunContext) => Crew | Promise<Crew>;

/**
 * A Flow subclass; each attempt makes `new FlowClass({ bus })` and kicks it off with the run's inputs
 * (or continues its checkpoint).
 */
export type FlowFactory = FlowClass;

/** The runs a worker can execute, by the names runs are enqueued under. */
export interface RunDefinitions {
  /** Crew factories by name. Default: none. */
  crews?: Record<string, CrewFactory>;
  /** Flow subclasses by name. Default: none. */
  flows?: Record<string, FlowFactory>;
}

/** One registered name. */
export type RegisteredRun =
  | { kind: 'crew'; name: string; build: CrewFactory }
  | { kind: 'flow'; name: string; build: FlowFactory };

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/**
 * The names runs are enqueued under and what each builds. A run names its crew or flow; it never
 * carries a module path: what runs is what the worker's code registered.
 */
export class RunRegistry {
  readonly #entries = new Map<string, RegisteredRun>();

  constructor(definitions: RunDefinitions = {}) {
    this.register(definitions);
  }

  /** Adds crews and flows; a name registered twice (in either table) is refused. */
  register(definitions: RunDefinitions): this {
    if (definitions === null || typeof definitions !== 'object') {
      throw workerError('invalid_config', 'run definitions must be an object: { crews: { name: factory } }');
    }
    const tables: [RunKind, Record<string, unknown> | undefined][] = [
      ['crew', definitions.crews],
      ['flow', definitions.flows],
    ];
    for (const [kind, table] of tables) {
      for (const [name, build] of Object.entries(table ?? {})) {
        assertRunName(name);
        if (typeof build !== 'function') {
          throw workerError(
            'invalid_config',
            `${kind}s.${name} is not a function; register a factory (context) => ${kind === 'crew' ? 'new Crew(...)' : 'new MyFlow()'}`,
          );
        }
        if (this.#entries.has(name)) {
          throw workerError(
            'invalid_config',
            `run name "${name}" is registered twice; names are unique across crews and flows`,
          );
        }
        this.#entries.set(name, { kind, name, build } as RegisteredRun);
      }
    }
    return this;
  }

  get(name: string): RegisteredRun | undefined {
    return this.#entries.get(name);
  }

  names(): string[] {
    return [...this.#entries.keys()].sort();
  }
}

/** Refuses a name that could not have been registered (so enqueue says so before any worker does). */
export function assertRunName(name: string): void {
  if (typeof name !== 'string' || !namePattern.test(name)) {
    throw workerError(
      'invalid_name',
      `run name ${JSON.stringify(name)} is not a registered-name shape; use letters, digits and . _ : / - (at most 128), not a module path`,
    );
  }
}

/** Identity helper for typed run definitions in `crewline.config.ts` (`runs: defineRuns({...})`). */
export function defineRuns(definitions: RunDefinitions): RunDefinitions {
  return definitions;
}
