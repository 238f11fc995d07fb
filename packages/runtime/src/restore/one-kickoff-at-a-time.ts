import { CrewlineError } from '@crewline/events';

const component = 'runtime';

/** Crews and agents whose kickoff has not returned yet. */
const running = new WeakSet<object>();

/**
 * Runs `kickoff` for `entity` unless a kickoff of the same object is still under way. Why refuse:
 * one Crew or Agent object holds the progress of one kickoff (its tasks' outputs and conversations),
 * so a second kickoff at the same time (two flow methods sharing a crew, a `Promise.all` over one
 * agent) reset and overwrote the first one's progress, and its checkpoints mixed the two.
 */
export async function oneKickoffAtATime<T>(
  entity: object,
  what: { kind: 'Crew' | 'Agent'; name: string },
  kickoff: () => Promise<T>,
): Promise<T> {
  if (running.has(entity)) {
    throw new CrewlineError(
      component,
      'invalid_state',
      `${what.kind} "${what.name}" is already running: its kickoff has not returned yet, and one ${what.kind} holds the progress of one kickoff; make a new ${what.kind} for each kickoff that runs at the same time (build it in a function), or await the first kickoff before the next`,
    );
  }
  running.add(entity);
  try {
    return await kickoff();
  } finally {
    running.delete(entity);
  }
}
