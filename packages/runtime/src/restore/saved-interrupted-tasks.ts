import { REDACTED } from '@crewline/events';
import { type CheckpointDocument, decodeValue } from '@crewline/runtime-state';
import {
  type CrewData,
  parseAgentData,
  parseCrewData,
  parseFlowData,
  taskLabel,
} from '@crewline/runtime-state/internal';
import {
  agentRestart,
  completedCallsOf,
  interruptedTasksSendRedacted,
  interruptedTaskWords,
  type RestartCause,
  restartCause,
} from '../crew/interrupted-tasks.js';
import { carriedSnapshots } from './carry-nested-snapshots.js';
import { savedInputs } from './saved-inputs.js';

/** A crew task a checkpoint holds in progress, with the conversation a continuation would continue. */
export interface InterruptedTask {
  /** From 1 across the checkpoint's crews, as `crewline checkpoint info` and `--set-output` number tasks. */
  number: number;
  label: string;
  /**
   * Model calls of its saved conversation that completed, its delegations' included (`completedCallsOf`):
   * made again when the task starts over.
   */
  completedCalls: number;
}

/**
 * The tasks a resume or fork of `document` would continue from a saved conversation: those in
 * progress (a run cancelled or stopped mid-task). Whether they do, or start over, is
 * {@link interruptedTasksOutcome}.
 */
export function interruptedTasks(document: CheckpointDocument): InterruptedTask[] {
  const found: InterruptedTask[] = [];
  let number = 0;
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    for (const task of parseCrewData(entity).tasks) {
      number += 1;
      if (task.status === 'completed' || task.conversation === null) continue;
      found.push({
        number,
        label: taskLabel(task.name, task.description),
        completedCalls: completedCallsOf(task),
      });
    }
  }
  return found;
}

/**
 * What continuing a checkpoint does with the tasks it was interrupted in ({@link interruptedTasksOutcome}):
 * `continue` their saved conversations; `restart` them (the crew's kickoff does, for `cause`); or, for
 * a crew inside a flow, `flow-decides`: the crew starts them over only if the flow's method passes it
 * what `cause` names (or, for `changed-inputs`, a credential again when its words name both causes:
 * both may hold). `words` says it: `warning` follows `task N "…" was interrupted; ` in a warning,
 * `plan` follows the task's name in a plan; both are followed by what it costs (`callsMadeAgain`).
 */
export type InterruptedTasksOutcome =
  | { action: 'continue' }
  | {
      action: 'restart' | 'flow-decides';
      cause: RestartCause;
      words: { warning: string; plan: string };
    };

/** The tasks of every crew `document` holds, as saved. */
function savedTasks(document: CheckpointDocument): CrewData['tasks'] {
  return document.entities.flatMap((entity) => (entity.kind === 'crew' ? parseCrewData(entity).tasks : []));
}

/**
 * Whether a crew inside a flow may start an interrupted task over for a credential whatever the flow's
 * state says: its own saved inputs hold `[REDACTED]` (a credential it was given, from the state or
 * from outside it: a closure, the environment), which its method gives it again as it runs, and its
 * interrupted tasks' conversations hold that text (review RC-4: a method handing the key from the
 * environment, the plan said "continued" and the crew started over, paying again).
 */
function crewsTakeCredentialAgain(document: CheckpointDocument): boolean {
  return document.entities.some((entity) => {
    if (entity.kind !== 'crew') return false;
    const crew = parseCrewData(entity);
    return holdsRedacted(decodeValue<unknown>(crew.inputs)) && interruptedTasksSendRedacted(crew.tasks);
  });
}

/**
 * Whether `value` holds `[REDACTED]` in a text, at any depth (as `restartCause` compares): the whole
 * text, or within it (an address whose password was redacted, review RG-2).
 */
function holdsRedacted(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(REDACTED);
  if (Array.isArray(value)) return value.some(holdsRedacted);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsRedacted);
  return false;
}

/**
 * What continuing `document` with `inputs` (all the kickoff inputs, changes applied) does with its
 * interrupted tasks, with the words the runtime's warnings and the plans say it in. A crew's kickoff
 * applies `restartCause` to the inputs it is given over those it saved: `restart` for its cause, else
 * `continue`. A crew inside a flow is given what the flow's method passes it, which only the flow's
 * code knows; the method runs again on the flow's saved state with the inputs merged in, so the same
 * rule is applied to that state: while the inputs change no key of it the method passes what it passed
 * before (`continue`), and once they do it is `flow-decides`: the task continues unless the method
 * passes its crew other inputs than the crew saved. A value saved as `[REDACTED]` given again is no
 * change: the credential the run had, which the checkpoint could not hold; it is `flow-decides` (for
 * `credential-given-again`) only when an interrupted task's conversation would send `[REDACTED]`
 * (the crew starts it over if the method passes it the credential). The method may give its crew a
 * credential from outside the state too: a crew whose own saved inputs hold `[REDACTED]` and whose
 * interrupted task's conversation holds it is `flow-decides` for it, whatever the inputs
 * (beside a changed state, the words name both causes). A standalone agent's checkpoint follows
 * `agentRestart`, as its kickoff does.
 */
export function interruptedTasksOutcome(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): InterruptedTasksOutcome {
  const sendsRedacted = () => interruptedTasksSendRedacted(savedTasks(document));
  const root = document.entities[0];
  // A standalone agent applies its own rule, the credential alone (review RJ-4: a changed input was
  // planned as a restart, and the agent continued). The CLI, the TUI and the explorer give no messages.
  if (root?.kind === 'agent') {
    const agent = parseAgentData(root);
    const rule = agentRestart(savedInputs(document), inputs, {
      completed: agent.status === 'completed',
      conversation: agent.conversation,
      request: agent.kickoffMessages,
      messagesGiven: false,
    });
    return outcome('restart', rule === 'start-over' ? 'credential-given-again' : undefined);
  }
  if (root?.kind !== 'flow')
    return outcome('restart', restartCause(savedInputs(document), inputs, sendsRedacted));
  // `id` names the state to continue (a different one is refused), it is not merged into it.
  const { id: _stateId, ...stateInputs } = inputs ?? {};
  const state = decodeValue<unknown>(parseFlowData(root).state);
  const saved = state !== null && typeof state === 'object' ? (state as Record<string, unknown>) : {};
  const cause = restartCause(saved, stateInputs, sendsRedacted);
  if (cause === 'credential-given-again' || !crewsTakeCredentialAgain(document))
    return outcome('flow-decides', cause);
  if (cause === undefined) return outcome('flow-decides', 'credential-given-again');
  return {
    action: 'flow-decides',
    cause,
    words: interruptedTaskWords['flow-decides']['changed-inputs-or-credential'],
  };
}

function outcome(
  action: 'restart' | 'flow-decides',
  cause: RestartCause | undefined,
): InterruptedTasksOutcome {
  if (cause === undefined) return { action: 'continue' };
  return { action, cause, words: interruptedTaskWords[action][cause] };
}

/**
 * Numbers (as `interruptedTasks` numbers them) of the tasks a continuation of `document` never runs,
 * whatever their status or an edit of an output before them: those of the crews a flow's completed
 * methods ran, which it carries as saved (`carriedSnapshots`). None for a crew's checkpoint.
 */
export function carriedTaskNumbers(document: CheckpointDocument): Set<number> {
  const carried = new Set(carriedSnapshots(document));
  const found = new Set<number>();
  let number = 0;
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    for (const _task of parseCrewData(entity).tasks) {
      number += 1;
      if (carried.has(entity)) found.add(number);
    }
  }
  return found;
}
