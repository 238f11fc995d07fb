import { type CrewlineError, isSecretKey, REDACTED } from '@crewline/events';
import type { CheckpointDocument, EncodedValue } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
import { flowError } from './errors.js';

/** Nested deeper than this, a state is not looked into further (redaction stops deeper too). */
const MAX_DEPTH = 32;

/**
 * The paths (`apiKey`, `database.password`, `tokens[1]`) at which `value` holds `[REDACTED]` exactly
 * (a string that merely contains the marker is text). `secretKeysOnly`: only under a credential-named
 * key (`isSecretKey`, which covers everything below such a key), as for inputs: an input is a value
 * its caller gave, and the marker under another name is what they meant (a scrubber's mask), while
 * under a credential's name it is the checkpoint's text sent back. A stored state counts it under any
 * key: redaction also replaces a whole value by its shape (`sk-live-…` under `stripe`) or as a
 * registered credential. Every object is looked into by its own keys: an encoded state holds a
 * registered class instance as a plain record, and so does redaction.
 */
function redactedPaths(value: unknown, secretKeysOnly: boolean): string[] {
  const found: string[] = [];
  collect(value, '', !secretKeysOnly, found, new Set(), 0);
  return found;
}

function collect(
  value: unknown,
  path: string,
  counts: boolean,
  found: string[],
  seen: Set<object>,
  depth: number,
): void {
  if (value === REDACTED) {
    if (counts) found.push(path);
    return;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      collect(item, `${path}[${index}]`, counts, found, seen, depth + 1);
    });
    return;
  }
  for (const key of Object.keys(value)) {
    // A flow state's `id` names the state; it is never a value redaction replaced.
    if (path === '' && key === 'id') continue;
    collect(
      (value as Record<string, unknown>)[key],
      path === '' ? key : `${path}.${key}`,
      counts || isSecretKey(key),
      found,
      seen,
      depth + 1,
    );
  }
}

/**
 * The one rule of which restored flow state fields are still `[REDACTED]` once `inputs` are merged
 * into the state (top-level field by field, as a continuation merges them): the fields of `state`,
 * the encoded state of record a checkpoint stored (see {@link redactedPaths}), that the inputs do not
 * give, and the fields the inputs give as `[REDACTED]` themselves (the checkpoint's text sent back,
 * as a client that resends every saved input does). The state is scanned before the merge, in the
 * form the checkpoint stored it: an input is a value, whatever its text.
 */
export function redactedStatePaths(
  state: EncodedValue | null | undefined,
  inputs: Readonly<Record<string, unknown>> = {},
): string[] {
  const sentBack = redactedPaths(inputs, true);
  const sentBackFields = new Set(sentBack.map(topField));
  const given = new Set(Object.keys(inputs).filter((key) => !sentBackFields.has(key)));
  const kept = state ? redactedPaths(state.json, false).filter((path) => !given.has(topField(path))) : [];
  return [...new Set([...kept, ...sentBack])];
}

/** The top-level state field a path is in: what an input replaces (`database` for `database.password`). */
function topField(path: string): string {
  const end = path.search(/[.[]/);
  return end < 0 ? path : path.slice(0, end);
}

/**
 * Puts back into `state` (a flow state just read back from the checkpoint its own run wrote, whose
 * encoded state of record is `stored`) the values `source` (the state this object held when it
 * wrote it) has where the checkpoint stored `[REDACTED]`: the run that paused still holds them, and
 * a resume in the same process needs no one to give them again.
 */
export function fillRedactedState(
  state: Record<string, unknown>,
  stored: EncodedValue | null | undefined,
  source: unknown,
): void {
  for (const path of redactedStatePaths(stored)) {
    const value = valueAt(source, path);
    if (value.found) setAt(state, path, value.value);
  }
}

const pathStep = /([^.[\]]+)|\[(\d+)\]/g;

function steps(path: string): (string | number)[] {
  return [...path.matchAll(pathStep)].map((match) => (match[2] !== undefined ? Number(match[2]) : match[1]!));
}

function valueAt(root: unknown, path: string): { found: boolean; value?: unknown } {
  let current = root;
  for (const step of steps(path)) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, step))
      return { found: false };
    current = (current as Record<string | number, unknown>)[step];
  }
  return { found: true, value: current };
}

function setAt(root: Record<string, unknown>, path: string, value: unknown): void {
  const all = steps(path);
  let current: unknown = root;
  for (const step of all.slice(0, -1)) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, step)) return;
    current = (current as Record<string | number, unknown>)[step];
  }
  if (current !== null && typeof current === 'object')
    (current as Record<string | number, unknown>)[all.at(-1)!] = value;
}

/**
 * How the refused continuation reaches the state, for the remedy the refusal gives: `checkpoint`
 * (a resume or fork of a checkpoint: its inputs), `stateId` (a kickoff of a persisted state by its
 * id: the kickoff's inputs, next to the id), `nested` (a flow kicked off in a method of another
 * flow: only the inputs that method gives it reach its state).
 */
export type RedactedStateReach = 'checkpoint' | 'stateId' | 'nested';

/** What a refusal of a restored state holding `[REDACTED]` says it about. */
export interface RedactedStateRefusal {
  flowName: string;
  /** The checkpoint the state was restored from, when the refusal knows it. */
  checkpointId?: string | undefined;
  /** The fields, as {@link redactedStatePaths} names them. */
  paths: readonly string[];
  /** How the continuation reaches the state (default: `checkpoint`). */
  reach?: RedactedStateReach;
}

/**
 * The refusal of a continuation whose restored state holds `[REDACTED]` where the run had a
 * credential: an `invalid_argument` error naming each field (never a value) and how to give it
 * again. `details.redactedState` lists the field paths, `details.inputs` the inputs to pass.
 */
export function redactedStateError({
  flowName,
  checkpointId,
  paths,
  reach = 'checkpoint',
}: RedactedStateRefusal): CrewlineError {
  const inputs = [...new Set(paths.map(topField))];
  const one = paths.length === 1;
  const it = one ? 'it' : 'them';
  const named = `state ${one ? 'field' : 'fields'} ${paths.map((path) => `"${path}"`).join(', ')} ${one ? 'is' : 'are'}`;
  const nested = inputs.filter((input) => !paths.includes(input));
  const given = inputs.map((input) => `${input}: …`).join(', ');
  // An input replaces the whole top-level field: a nested field comes with it, as JSON on the
  // command line. `<value>`, not `…`: redaction takes what follows `apiKey=` for a credential.
  const whole =
    nested.length === 0
      ? ''
      : ` (an input replaces a whole field: give ${nested.map((input) => `"${input}"`).join(', ')} with every field ${nested.length === 1 ? 'it holds' : 'they hold'})`;
  const onCommandLine = inputs
    .map((input) => (nested.includes(input) ? `--input ${input}:=<json>` : `--input ${input}=<value>`))
    .join(' ');
  const remedy: Record<RedactedStateReach, string> = {
    checkpoint: `give ${it} again${whole}: inputs: { ${given} } (kickoff, resume or continueFromCheckpoint), ${onCommandLine} (crewline checkpoint resume or fork)`,
    stateId: `give ${it} again with the state id${whole}: kickoff({ inputs: { id, ${given} } })`,
    nested: `${one ? 'its value' : 'their values'} must come from the method that kicks this flow off, in its kickoff inputs${whole} (kickoff({ inputs: { ${given} } })): --input and a continuation's inputs reach only the outermost flow`,
  };
  const from = checkpointId === undefined ? '' : `checkpoint ${checkpointId}: `;
  return flowError(
    'invalid_argument',
    `${from}flow "${flowName}"${reach === 'nested' ? " (kicked off in another flow's method)" : ''}: ${named} stored as ${REDACTED} and a method left to run may read ${it}; ${remedy[reach]}`,
    { details: { redactedState: [...paths], inputs } },
  );
}

/**
 * Refuses, before anything runs, a continuation of `document` whose flow (the run's root) has methods
 * left to run and a saved state still holding `[REDACTED]` once `inputs` are merged (see
 * {@link redactedStatePaths} and {@link redactedStateError}). Not a flow kicked off in one of its
 * methods: what reaches its state is what that method gives it, which cannot be known here (it may
 * hand the value on); it checks as it starts, before it runs anything. The flow checks again as it
 * starts, whatever way it is continued; this is for callers that check a continuation before saying
 * anything about it (the CLI, `checkContinuation`).
 */
export function refuseRedactedStateInDocument(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  const root = document.entities[0];
  if (root?.kind !== 'flow') return;
  const { execution, flowName } = parseFlowData(root);
  // A finished flow runs no method: its resume gives its output back.
  if (execution.status === 'completed' && execution.pending.length === 0) return;
  const paths = redactedStatePaths(execution.committedState, inputs);
  if (paths.length === 0) return;
  throw redactedStateError({ flowName, checkpointId: document.metadata.id, paths });
}
