import { type CrewlineError, REDACTED } from '@crewline/events';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
import { flowError } from './errors.js';

/** Nested deeper than this, a state is not looked into further (redaction stops deeper too). */
const MAX_DEPTH = 32;

/**
 * The paths of the fields of a flow state that hold `[REDACTED]` (`apiKey`, `database.password`,
 * `tokens[1]`): a checkpoint stores a credential-named field, or a value that was a credential, as
 * that text, and a restored state gets it back as the field's value. Plain records and arrays are
 * looked into, as redaction walks them; `id` is never a credential. A string that merely contains
 * the marker (free text redacted by pattern) is no field to ask for again.
 */
export function redactedStatePaths(state: unknown): string[] {
  const found: string[] = [];
  collect(state, '', found, new Set(), 0);
  return found.filter((path) => path !== 'id');
}

function collect(value: unknown, path: string, found: string[], seen: Set<object>, depth: number): void {
  if (value === REDACTED) {
    found.push(path);
    return;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      collect(item, `${path}[${index}]`, found, seen, depth + 1);
    });
    return;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return;
  for (const key of Object.keys(value)) {
    collect(
      (value as Record<string, unknown>)[key],
      path === '' ? key : `${path}.${key}`,
      found,
      seen,
      depth + 1,
    );
  }
}

/** The top-level state field a path is in: what an input replaces (`database` for `database.password`). */
function topField(path: string): string {
  const end = path.search(/[.[]/);
  return end < 0 ? path : path.slice(0, end);
}

/**
 * Puts back into `state` (a flow state just read back from the checkpoint its own run wrote) the
 * values `source` (the state this object held when it wrote it) has where the checkpoint stored
 * `[REDACTED]`: the run that paused still holds them, and a resume in the same process needs no one
 * to give them again. Only a field whose value in `source` is not the marker itself is put back.
 */
export function fillRedactedState(state: Record<string, unknown>, source: unknown): void {
  for (const path of redactedStatePaths(state)) {
    const value = valueAt(source, path);
    if (value.found && value.value !== REDACTED) setAt(state, path, value.value);
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
  for (const step of all.slice(0, -1)) current = (current as Record<string | number, unknown>)[step];
  (current as Record<string | number, unknown>)[all.at(-1)!] = value;
}

/** What a refusal of a restored state holding `[REDACTED]` says it about. */
export interface RedactedStateRefusal {
  flowName: string;
  /** The checkpoint the state was restored from, when the refusal knows it. */
  checkpointId?: string | undefined;
  /** The fields, as {@link redactedStatePaths} names them. */
  paths: readonly string[];
}

/**
 * The refusal of a continuation whose restored state holds `[REDACTED]` where the run had a
 * credential: an `invalid_argument` error naming each field (never a value) and how to pass it
 * again as an input of the resume or fork (inputs are merged into the state, top-level field by
 * field). `details.redactedState` lists the field paths, `details.inputs` the inputs to pass.
 */
export function redactedStateError({ flowName, checkpointId, paths }: RedactedStateRefusal): CrewlineError {
  const inputs = [...new Set(paths.map(topField))];
  const one = paths.length === 1;
  const named = paths.map((path) => `"${path}"`).join(', ');
  const nested = inputs.filter((input) => !paths.includes(input));
  const inCode = `inputs: { ${inputs.map((input) => `${input}: …`).join(', ')} }`;
  // `<value>`, not `…`: redaction takes what follows `apiKey=` in a message for a credential. A
  // nested field is given with its whole top-level field, as JSON on the command line.
  const onCommandLine = inputs
    .map((input) => (nested.includes(input) ? `--input ${input}:=<json>` : `--input ${input}=<value>`))
    .join(' ');
  const whole =
    nested.length === 0
      ? ''
      : ` (an input replaces the whole top-level field: give ${nested.map((input) => `"${input}"`).join(', ')} with every field ${nested.length === 1 ? 'it holds' : 'they hold'})`;
  const from = checkpointId === undefined ? '' : `checkpoint ${checkpointId}: `;
  return flowError(
    'invalid_argument',
    `${from}flow "${flowName}": state ${one ? 'field' : 'fields'} ${named} ${one ? 'is' : 'are'} stored as ${REDACTED} (checkpoints never hold a credential) and methods that have not completed may read ${one ? 'it' : 'them'}: continued without ${one ? 'it' : 'them'}, they would get the text ${REDACTED}; pass ${one ? 'it' : 'them'} again as ${inputs.length === 1 ? 'an input' : 'inputs'} of the resume or fork, which ${inputs.length === 1 ? 'is' : 'are'} merged into the state${whole}: kickoff({ fromCheckpoint, ${inCode} }), resume(answer, { ${inCode} }) or continueFromCheckpoint({ …, ${inCode} }) in code, ${onCommandLine} with crewline checkpoint resume or fork`,
    { details: { redactedState: [...paths], inputs } },
  );
}

/**
 * Refuses, before anything runs, a continuation of `document` whose flow (its owner) has methods
 * left to run and a saved state holding `[REDACTED]` in a field that `inputs` (merged into the state
 * top-level field by field) do not give again (see {@link redactedStateError}). The flow checks this
 * again as it starts, whatever way it is continued; this is for callers that check a continuation
 * before saying anything about it (the CLI, `checkContinuation`).
 */
export function refuseRedactedStateInDocument(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  const owner = document.entities[0];
  if (owner?.kind !== 'flow') return;
  const { execution, flowName } = parseFlowData(owner);
  // A finished flow runs no method: its resume gives its output back.
  if (execution.status === 'completed' && execution.pending.length === 0) return;
  if (execution.committedState === null) return;
  const given = new Set(Object.keys(inputs ?? {}));
  const paths = redactedStatePaths(execution.committedState.json).filter(
    (path) => !given.has(topField(path)),
  );
  if (paths.length === 0) return;
  throw redactedStateError({ flowName, checkpointId: document.metadata.id, paths });
}
