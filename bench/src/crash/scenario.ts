// What the crash trials run and how they interrupt it: the two scenarios (a crew, a flow) and the
// three signals, with the facts about each that the checks and the report need.

export type ScenarioName = 'crew' | 'flow';
export type SignalName = 'KILL' | 'INT' | 'TERM';

export const scenarioNames: readonly ScenarioName[] = ['crew', 'flow'];
export const signalNames: readonly SignalName[] = ['KILL', 'INT', 'TERM'];

export interface ScenarioFacts {
  /** What runs, for the report. */
  description: string;
  /** The event a run emits once when it starts (never again on resume). */
  startEvent: string;
  /** The trigger of the last checkpoint of a whole run. */
  finalTrigger: string;
}

export const scenarios: Record<ScenarioName, ScenarioFacts> = {
  crew: {
    description: 'a crew of 3 agents and 4 tasks, one tool call per task (8 model calls)',
    startEvent: 'crew_kickoff_started',
    finalTrigger: 'crew_kickoff_completed',
  },
  flow: {
    description:
      'a flow `gather` (start) → `assess` (router) → `expand` or `condense` → `publish`, each method running a one-agent crew with one tool call per task (6 tasks, 12 model calls)',
    startEvent: 'flow_started',
    finalTrigger: 'flow_finished',
  },
};

/** The process signal a trial sends. */
export function processSignal(signal: SignalName): NodeJS.Signals {
  return `SIG${signal}`;
}

/** Reads a comma-separated list of names, refusing any not in `allowed`. */
export function parseNames<T extends string>(text: string, allowed: readonly T[], option: string): T[] {
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !allowed.includes(name as T));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`${option} takes ${allowed.join(', ')} (comma-separated); got ${text}`);
  return names as T[];
}
