import { logger, REDACTED } from '@crewline/events';
import type { ModelMessage } from 'ai';
import { pendingToolCalls } from '../agent-loop/conversation.js';

/**
 * Whether `inputs` gives any key another value than `saved` (the inputs a run was kicked off with,
 * as its checkpoint holds them). A value `saved` holds as `[REDACTED]` exactly (a credential, at the
 * top or in a field of an input) is no change, whatever is given there, nor is a text that reads as
 * one saved with the marker within it (an address's password): the checkpoint never holds a
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
    (key) =>
      JSON.stringify(redactedAsSaved(saved[key], inputs[key]), keysInOrder) !==
      JSON.stringify(saved[key], keysInOrder),
  );
}

/**
 * A `JSON.stringify` replacer writing a plain record's keys sorted: a record given in another key
 * order than the checkpoint saved it is the same input (review RC: it started tasks over). Values JSON
 * cannot write are written by what they hold (review RG-7): a Set's members and a Map's entries (each
 * `{}` before, so any change of them went unseen), a bigint's digits (it threw, failing the kickoff).
 */
function keysInOrder(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { [typeField]: 'bigint', digits: value.toString() };
  // In either order the same members: sorted by how each is written.
  if (value instanceof Set)
    return { [typeField]: 'Set', members: [...value].map((member) => writtenInOrder(member)).sort() };
  if (value instanceof Map)
    return {
      [typeField]: 'Map',
      entries: [...value.entries()].map((entry) => writtenInOrder(entry)).sort(),
    };
  if (!isPlainRecord(value)) return value;
  // fromEntries defines each key, so a key named `__proto__` stays a field, as JSON writes it.
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, value[key]]),
  );
}

/** The field naming what a value JSON cannot write was ({@link keysInOrder}); no input's own key. */
const typeField = '\u0000type';

function writtenInOrder(value: unknown): string {
  return JSON.stringify(value, keysInOrder) ?? 'undefined';
}

/**
 * `given` with `[REDACTED]` wherever `saved` holds it exactly, walking the arrays, plain records and
 * Maps both hold, and a Set's members paired with the saved ones they read as ({@link pairedMembers}); anything else as given (so a value of another shape, or another field, still differs).
 * A saved text holding the marker within it (an address whose password was redacted,
 * `postgres://admin:[REDACTED]@db/app`) is as saved when `given` reads the same around each marker
 * (review RG-2: the address given again was a change, and the task started over).
 * Follows `saved`, decoded from a checkpoint: no cycle to guard against.
 */
function redactedAsSaved(saved: unknown, given: unknown): unknown {
  if (saved === REDACTED) return REDACTED;
  if (typeof saved === 'string' && redactedWithin(saved, given)) return saved;
  if (Array.isArray(saved) && Array.isArray(given))
    return given.map((item, index) => redactedAsSaved(saved[index], item));
  if (saved instanceof Map && given instanceof Map)
    return new Map(
      [...given].map(([key, value]) => [
        key,
        saved.has(key) ? redactedAsSaved(saved.get(key), value) : value,
      ]),
    );
  if (saved instanceof Set && given instanceof Set)
    return new Set(pairedMembers(saved, given).map(([member, paired]) => (paired ? paired.member : member)));
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
 * Each member of `given` with the member of `saved` it reads as, `undefined` when none: the same
 * member first, then one holding `[REDACTED]` that it gives again ({@link redactedAsSaved}); each
 * saved member is taken once. A Set has no keys to walk by (review RJ-2: a Set holding an address
 * whose password was redacted, given again, was a change, and its task started over).
 */
function pairedMembers(
  saved: ReadonlySet<unknown>,
  given: ReadonlySet<unknown>,
): [member: unknown, saved: { member: unknown } | undefined][] {
  const unused = [...saved].map((member) => ({ member, written: writtenInOrder(member) }));
  const take = (index: number) => (index === -1 ? undefined : unused.splice(index, 1)[0]);
  const paired = [...given].map((member): [unknown, { member: unknown } | undefined] => {
    const written = writtenInOrder(member);
    return [member, take(unused.findIndex((candidate) => candidate.written === written))];
  });
  for (const pair of paired) {
    if (pair[1] !== undefined) continue;
    const member = pair[0];
    pair[1] = take(
      unused.findIndex(
        (candidate) => writtenInOrder(redactedAsSaved(candidate.member, member)) === candidate.written,
      ),
    );
  }
  return paired;
}

/**
 * Whether `saved` holds `[REDACTED]` within its text and `given` is a text that reads the same with
 * something (not nothing) where each marker is: the value the checkpoint saved redacted. Read left to
 * right without a regular expression (review RJ-3: the pattern `^…[\s\S]+…$` backtracked without end
 * on a long text that did not match, and held the kickoff): the text before the first marker is a
 * prefix, the one after the last a suffix, each between found from one character past the previous
 * one. A marker's run holds none of the characters that end a password in an address or an
 * assignment ({@link endsCredential}; review RJ-5: `postgres://admin:[REDACTED]` read
 * `postgres://admin:pw@other/app` given as the same address).
 */
function redactedWithin(saved: string, given: unknown): given is string {
  if (typeof given !== 'string' || !saved.includes(REDACTED)) return false;
  const pieces = saved.split(REDACTED);
  const first = pieces[0] ?? '';
  const last = pieces[pieces.length - 1] ?? '';
  // Each marker stands for one character at least.
  if (given.length < first.length + last.length + pieces.length - 1) return false;
  if (!given.startsWith(first) || !given.endsWith(last)) return false;
  const end = given.length - last.length;
  let position = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = given.indexOf(piece, position + 1);
    if (found === -1 || found + piece.length > end || !credentialRun(given, position, found)) return false;
    position = found + piece.length;
  }
  return position < end && credentialRun(given, position, end);
}

/** Characters that end a password in an address (`@`, `/`, `&`, `;`) or an assignment (whitespace). */
const endsCredential = /[&@/;\s]/;

function credentialRun(text: string, start: number, end: number): boolean {
  return !endsCredential.test(text.slice(start, end));
}

/**
 * Whether `inputs` gives a value again where `saved` holds `[REDACTED]` exactly (not that text
 * itself), or a text holding it within as {@link redactedWithin} reads it: a credential the
 * checkpoint could not hold. No change for {@link changesInputs}, but a
 * task whose conversation took it in holds `[REDACTED]` there (see {@link restartCause}). A restored
 * standalone agent applies this cause alone (its kickoff), and the CLI's heading says such an input
 * as given again.
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
  if (typeof saved === 'string') return given !== saved && redactedWithin(saved, given);
  if (Array.isArray(saved) && Array.isArray(given))
    return given.some((item, index) => index < saved.length && redactedGiven(saved[index], item));
  if (saved instanceof Map && given instanceof Map)
    return [...given].some(([key, value]) => saved.has(key) && redactedGiven(saved.get(key), value));
  if (saved instanceof Set && given instanceof Set)
    return pairedMembers(saved, given).some(
      ([member, paired]) => paired !== undefined && redactedGiven(paired.member, member),
    );
  if (isPlainRecord(saved) && isPlainRecord(given))
    return Object.keys(given).some(
      (key) => Object.hasOwn(saved, key) && redactedGiven(saved[key], given[key]),
    );
  return false;
}

/**
 * The rule a restored standalone agent continued with `inputs` over those it `saved` applies to its
 * interrupted conversation, which its kickoff applies and so does the plan of its checkpoint's
 * continuation (review RJ-4: the plan applied the crew's whole rule, and said a changed input started
 * it over). Only a credential given again while its unfinished conversation holds `[REDACTED]` starts it
 * over (`start-over`): a changed input does not, its system prompt being built from the inputs at each
 * call (not saved, so not read here). `request-holds-redacted`: it would, but the request it ran on holds
 * the marker too and no `messages` are given, so it continues (the CLI cannot give them). `undefined`:
 * it continues.
 */
export function agentRestart(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
  agent: {
    completed: boolean;
    conversation: SavedConversation | null | undefined;
    request: unknown;
    messagesGiven: boolean;
  },
): 'start-over' | 'request-holds-redacted' | undefined {
  const { conversation } = agent;
  if (agent.completed || conversation === null || conversation === undefined || conversation.finished)
    return undefined;
  if (!givesRedactedAgain(saved, inputs)) return undefined;
  if (!continuationSendsRedacted({ systemPrompt: null, conversation, delegations: {} })) return undefined;
  if (!agent.messagesGiven && JSON.stringify(agent.request ?? []).includes(REDACTED))
    return 'request-holds-redacted';
  return 'start-over';
}

/** A saved conversation as far as {@link continuationSendsRedacted} reads it (a task's or a delegation's). */
interface SavedConversation {
  messages: readonly unknown[];
  finished: boolean;
  output?: string | undefined;
}

/**
 * Whether continuing an interrupted task's saved conversation would hand `[REDACTED]` on: a
 * credential went into it (a template filled with it, a tool or an answer that echoed it), which the
 * checkpoint holds as that text. While the conversation is unfinished, its system prompt and messages
 * go to the model again, and so does a delegation whose tool call awaits its result: an unfinished one
 * continues (review R5: a tool result echoing the key was continued, and sent), a finished one hands
 * its answer on. A finished conversation is never continued: only its answer goes on, so its messages
 * do not count (review R6-6: a coworker's tool that echoed the key in a finished delegation started the
 * manager's task over, paying again for its calls and the delegation's). Nor do those of a delegation
 * whose tool call has its result (review RC-1: a failed delegation answered the manager with an error,
 * and its conversation, never run again, started the task over): that result is in the manager's
 * messages already.
 */
export function continuationSendsRedacted(task: {
  systemPrompt: string | null | undefined;
  conversation: SavedConversation;
  delegations: Readonly<Record<string, SavedConversation>>;
}): boolean {
  const { conversation } = task;
  if (conversation.finished) return answerHoldsRedacted(conversation);
  return (
    (task.systemPrompt ?? '').includes(REDACTED) ||
    JSON.stringify(conversation.messages).includes(REDACTED) ||
    // Delegations are saved by the id of the manager's tool call that asked for them.
    pendingToolCalls({ messages: conversation.messages as ModelMessage[] }).some((call) => {
      const delegation = task.delegations[call.toolCallId];
      if (delegation === undefined) return false;
      return delegation.finished
        ? answerHoldsRedacted(delegation)
        : JSON.stringify(delegation.messages).includes(REDACTED);
    })
  );
}

function answerHoldsRedacted(conversation: SavedConversation): boolean {
  return (conversation.output ?? '').includes(REDACTED);
}

/**
 * Why a continuation starts a task it was interrupted in over rather than continue its saved
 * conversation: `changed-inputs`, an input the run saved is given another value, which the
 * conversation's prompts would never see (they hold the old one); `credential-given-again`, nothing
 * changed, but a credential saved as `[REDACTED]` is given again and the conversation holds that text
 * ({@link continuationSendsRedacted}): started over, the task sends the model the real value.
 */
export type RestartCause = 'changed-inputs' | 'credential-given-again';

/**
 * The rule a crew continued with `inputs` over the inputs it `saved` applies to its interrupted
 * tasks: the {@link RestartCause} that starts them over, `undefined` when they continue their saved
 * conversations (nothing changed, or a credential given again that no conversation would send as
 * `[REDACTED]`, which costs nothing). `sendsRedacted` is asked last, and only when a credential is
 * given again: reading the conversations matters only then. The crew's kickoff applies it
 * ({@link restartInterruptedTasks}), and so does the plan of a checkpoint's continuation
 * (`interruptedTasksOutcome`).
 */
export function restartCause(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
  sendsRedacted: () => boolean,
): RestartCause | undefined {
  if (changesInputs(saved, inputs)) return 'changed-inputs';
  if (givesRedactedAgain(saved, inputs) && sendsRedacted()) return 'credential-given-again';
  return undefined;
}

/**
 * What happens to an interrupted task, and why, in the words every surface says it: `warning` follows
 * `task N "…" was interrupted; ` in the runtime's warning as a crew kicks off and the worker's as it
 * forks, `plan` follows the task's name in the plan the CLI, the TUI and the explorer show. `restart`:
 * the crew starts it over; `flow-decides`: a crew inside a flow, started over only if the flow's
 * method passes it what the cause names (only the flow's code knows), or either of both. Each is
 * followed by what it costs ({@link callsMadeAgain}).
 */
export const interruptedTaskWords = {
  restart: {
    'changed-inputs': {
      warning:
        'with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs',
      plan: 'starts over with the new inputs',
    },
    'credential-given-again': {
      warning: `its saved conversation holds a credential as ${REDACTED}, so with the credential given again it starts over to send the model the real one instead of continuing that conversation`,
      plan: `starts over to send the model the credential given again, which its saved conversation holds as ${REDACTED}`,
    },
  },
  'flow-decides': {
    'changed-inputs': {
      warning:
        'it continues its saved conversation unless the flow gives its crew other inputs with the changed ones, then starts over',
      plan: 'continues its saved conversation unless the flow gives its crew other inputs, then starts over',
    },
    'credential-given-again': {
      warning: `it continues its saved conversation unless the flow gives its crew a credential again that this conversation holds as ${REDACTED}; then it starts over to send the model the real one`,
      plan: `continues its saved conversation unless the flow gives its crew a credential again that this conversation holds as ${REDACTED}; then it starts over to send the model the real one`,
    },
    // Both may hold (review RC-3): the inputs change the flow's state, and the crew's own saved
    // inputs hold a credential its method gives it again; either starts the task over.
    'changed-inputs-or-credential': {
      warning: `it continues its saved conversation unless the flow gives its crew other inputs with the changed ones, or a credential again that this conversation holds as ${REDACTED}; then it starts over`,
      plan: `continues its saved conversation unless the flow gives its crew other inputs, or a credential again that this conversation holds as ${REDACTED}; then it starts over`,
    },
  },
} as const satisfies {
  restart: Record<RestartCause, InterruptedTaskWords>;
  'flow-decides': Record<RestartCause | 'changed-inputs-or-credential', InterruptedTaskWords>;
};

/** What an interrupted task's outcome says: see {@link interruptedTaskWords}. */
interface InterruptedTaskWords {
  warning: string;
  plan: string;
}

/** A task as {@link interruptedTasksSendRedacted} and {@link completedCallsOf} read it: live or saved. */
export interface InterruptedTaskParts {
  status: string;
  systemPrompt: string | null | undefined;
  conversation: (SavedConversation & { llmCalls: number }) | null | undefined;
  delegations: Readonly<Record<string, SavedConversation & { llmCalls: number }>>;
}

/**
 * Whether an interrupted task of `tasks` (a crew's, live or as a checkpoint holds them) would hand
 * `[REDACTED]` on if continued ({@link continuationSendsRedacted}).
 */
export function interruptedTasksSendRedacted(tasks: readonly InterruptedTaskParts[]): boolean {
  return tasks.some(
    ({ status, conversation, systemPrompt, delegations }) =>
      status !== 'completed' &&
      conversation !== null &&
      conversation !== undefined &&
      continuationSendsRedacted({ systemPrompt, conversation, delegations }),
  );
}

/**
 * The model calls an interrupted task completed: those of its conversation and of every delegation
 * its manager made (a hierarchical task), all made and paid again when it starts over (review RC-5:
 * the warning and the plan counted the manager's alone). What {@link callsMadeAgain} is given.
 */
export function completedCallsOf(task: Pick<InterruptedTaskParts, 'conversation' | 'delegations'>): number {
  let calls = task.conversation?.llmCalls ?? 0;
  for (const delegation of Object.values(task.delegations)) calls += delegation.llmCalls;
  return calls;
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
 * Starts over the tasks a restored crew was interrupted in when {@link restartCause} says so for the
 * `inputs` it continues with over those it `saved`, warning of each with the cause and the model calls
 * made again (its completed calls are paid again: the price of the new inputs, or of sending the
 * credential rather than `[REDACTED]`). Otherwise such a task continues its saved conversation and
 * nothing is paid twice.
 */
export function restartInterruptedTasks(
  owner: string,
  // By shape, not `Task`: the task's module reaches the agent's, which applies this module's rule.
  tasks: readonly (InterruptedTaskParts & { label: string; resetProgress(): void })[],
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  const cause = restartCause(saved, inputs, () => interruptedTasksSendRedacted(tasks));
  if (cause === undefined) return;
  for (const [index, task] of tasks.entries()) {
    if (task.status === 'completed' || !task.conversation) continue;
    logger.warn(
      'runtime',
      `${owner}: task ${index + 1} "${task.label}" was interrupted; ${interruptedTaskWords.restart[cause].warning}${callsMadeAgain(completedCallsOf(task))}`,
    );
    task.resetProgress();
  }
}
