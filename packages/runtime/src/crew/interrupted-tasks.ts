import { logger, REDACTED } from '@crewline/events';
import type { Task } from '../task/task.js';

/**
 * Whether `inputs` gives any key another value than `saved` (the inputs a run was kicked off with,
 * as its checkpoint holds them). A value `saved` holds as `[REDACTED]` exactly (a credential, at the
 * top or in a field of an input) is no change, whatever is given there: the checkpoint never holds a
 * credential, so it is given again whenever a run continues (the refusal of a continuation without
 * it says to), and is the one the run had; a saved conversation was written redacted too, so it holds
 * no old value of it that a continuation would have to replace.
 */
export function changesInputs(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (inputs === undefined) return false;
  return Object.keys(inputs).some(
    (key) => JSON.stringify(redactedAsSaved(saved[key], inputs[key])) !== JSON.stringify(saved[key]),
  );
}

/**
 * `given` with `[REDACTED]` wherever `saved` holds it exactly, walking the arrays and plain records
 * both hold; anything else as given (so a value of another shape, or another field, still differs).
 * Follows `saved`, decoded from a checkpoint: no cycle to guard against.
 */
function redactedAsSaved(saved: unknown, given: unknown): unknown {
  if (saved === REDACTED) return REDACTED;
  if (Array.isArray(saved) && Array.isArray(given))
    return given.map((item, index) => redactedAsSaved(saved[index], item));
  if (isPlainRecord(saved) && isPlainRecord(given)) {
    const laidOver: Record<string, unknown> = {};
    for (const key of Object.keys(given)) {
      // Defined so, a key named `__proto__` stays a field, as JSON writes it.
      Object.defineProperty(laidOver, key, {
        value: Object.hasOwn(saved, key) ? redactedAsSaved(saved[key], given[key]) : given[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return laidOver;
  }
  return given;
}

/**
 * Whether `inputs` gives a value again where `saved` holds `[REDACTED]` exactly (not that text
 * itself): a credential the checkpoint could not hold. No change for {@link changesInputs}, but a
 * task whose prompt was filled with it holds `[REDACTED]` there (see {@link startsInterruptedTasksOver}).
 */
export function givesRedactedAgain(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (inputs === undefined) return false;
  return Object.keys(inputs).some(
    (key) => Object.hasOwn(saved, key) && redactedGiven(saved[key], inputs[key]),
  );
}

function redactedGiven(saved: unknown, given: unknown): boolean {
  if (saved === REDACTED) return given !== REDACTED;
  if (Array.isArray(saved) && Array.isArray(given))
    return given.some((item, index) => index < saved.length && redactedGiven(saved[index], item));
  if (isPlainRecord(saved) && isPlainRecord(given))
    return Object.keys(given).some(
      (key) => Object.hasOwn(saved, key) && redactedGiven(saved[key], given[key]),
    );
  return false;
}

/**
 * Whether a task's saved conversation holds `[REDACTED]` anywhere: its system prompt, the task as it
 * was given, a tool's result, an answer, or the conversation of a delegation it made. A credential
 * went into it (a template filled with it, a tool that echoed it), which the checkpoint holds as that
 * text, so continuing the conversation would send the model `[REDACTED]` (review R5: a tool result
 * echoing the key was continued, and sent).
 */
export function promptsHoldRedacted(
  systemPrompt: string | null | undefined,
  messages: readonly unknown[],
  delegations: Readonly<Record<string, { messages: readonly unknown[] }>> = {},
): boolean {
  return (
    (systemPrompt ?? '').includes(REDACTED) ||
    JSON.stringify(messages).includes(REDACTED) ||
    Object.values(delegations).some((delegation) => JSON.stringify(delegation.messages).includes(REDACTED))
  );
}

/**
 * Whether a crew continued with `inputs` starts its interrupted tasks over rather than continuing
 * their saved conversations: when `inputs` change one it saved ({@link changesInputs}), or give again
 * a credential it saved as `[REDACTED]` while the saved prompts of an interrupted task hold that text
 * (`redactedInPrompts`, asked only then): started over, the task is given the value, where its conversation would send
 * the model `[REDACTED]`. A credential given again that no interrupted prompt holds costs nothing.
 */
export function startsInterruptedTasksOver(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
  redactedInPrompts: () => boolean,
): boolean {
  // The conversations are read last: only a credential given again makes them matter.
  return changesInputs(saved, inputs) || (givesRedactedAgain(saved, inputs) && redactedInPrompts());
}

/** Whether an interrupted task of `tasks` has saved prompts holding `[REDACTED]` ({@link promptsHoldRedacted}). */
export function interruptedPromptsHoldRedacted(tasks: readonly Task[]): boolean {
  return tasks.some(
    (task) =>
      task.status !== 'completed' &&
      task.conversation !== undefined &&
      promptsHoldRedacted(task.systemPrompt, task.conversation.messages, task.delegations),
  );
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * What starting over an interrupted task costs, as a clause its warnings end with: the model calls
 * of its saved conversation that completed are made (and paid) again. With `kept`, the clause of a
 * task that continues its conversation instead: they are not made again. Empty when it had made none.
 */
export function callsMadeAgain(calls: number, options: { kept?: boolean } = {}): string {
  if (calls === 0) return '';
  return `; the ${calls} model call${calls === 1 ? '' : 's'} it had made ${calls === 1 ? 'is' : 'are'} ${options.kept ? 'not ' : ''}made again`;
}

/**
 * Starts over the tasks a continued run was interrupted in, when it continues with changed inputs:
 * such a task would otherwise continue its saved conversation, whose prompts were filled with the
 * old inputs, so the new ones would never reach it. Says so, with the model calls made again (its
 * completed calls are paid again: the price of the new inputs). Without changed inputs a resume
 * continues the conversation and pays for nothing twice.
 */
export function restartInterruptedTasks(owner: string, tasks: readonly Task[]): void {
  for (const [index, task] of tasks.entries()) {
    if (task.status === 'completed' || task.conversation === undefined) continue;
    logger.warn(
      'runtime',
      `${owner}: task ${index + 1} "${task.label}" was interrupted; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs${callsMadeAgain(task.conversation.llmCalls)}`,
    );
    task.resetProgress();
  }
}
