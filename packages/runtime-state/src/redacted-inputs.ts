import { CrewlineError, REDACTED } from '@crewline/events';
import type { CheckpointDocument, EntitySnapshot } from './document.js';
import type { AgentDefinitionData } from './entity-data/agent-data.js';
import { parseAgentData } from './entity-data/agent-data.js';
import { parseCrewData, taskLabel } from './entity-data/crew-data.js';
import { findPlaceholders } from './entity-data/placeholders.js';
import { stateError } from './errors.js';

/** Nested deeper than this, an input is not looked into further: kickoff inputs are a few flat fields. */
const MAX_DEPTH = 32;

/** An input a continuation would fill templates with as `[REDACTED]`, and the work that uses it. */
export interface RedactedInputInUse {
  key: string;
  /** The unfinished work whose templates use `{key}`: `task 2 ("Call the weather service…")`. */
  usedBy: string[];
}

/**
 * The inputs that continuing `document` with `inputs` (all its kickoff inputs: the saved ones with
 * the caller's laid over them) would fill a template of unfinished work with as `[REDACTED]`: the
 * checkpoint stored them redacted (their name says they are credentials, or their value was one)
 * and the caller did not pass them again. Such a task would be sent the text `[REDACTED]` where its
 * kickoff had the value. Looks at a crew's tasks that are not completed (their description and
 * expected output, the role, goal and backstory of the agents that run them) and a standalone
 * agent that is not completed; a flow fills its crews' inputs in its own code, which no template
 * shows, and is not looked at.
 */
export function redactedInputsInUse(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>>,
): RedactedInputInUse[] {
  if (inputs === null || typeof inputs !== 'object') return [];
  const redacted = Object.keys(inputs).filter((key) => holdsRedacted(inputs[key], new Set(), 0));
  if (redacted.length === 0) return [];
  const uses = templatesOfUnfinishedWork(document);
  const found: RedactedInputInUse[] = [];
  for (const key of redacted) {
    const usedBy = uses.filter((use) => use.placeholders.has(key)).map((use) => use.owner);
    if (usedBy.length > 0) found.push({ key, usedBy: [...new Set(usedBy)] });
  }
  return found;
}

/**
 * Refuses, before anything runs, a continuation of `document` that would fill a template of
 * unfinished work with an input stored as `[REDACTED]` (see {@link redactedInputsInUse}): an
 * `invalid_argument` error naming each input and how to pass it again, in code and on the command
 * line.
 */
export function refuseRedactedInputsInUse(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>>,
): void {
  const found = redactedInputsInUse(document, inputs);
  if (found.length === 0) return;
  const keys = found.map((input) => input.key);
  const one = found.length === 1;
  const named = found.map((input) => `"${input.key}" (used by ${input.usedBy.join(', ')})`).join(', ');
  const inCode = `inputs: { ${keys.map((key) => `${key}: …`).join(', ')} }`;
  // `<value>`, not `…`: redaction takes what follows `apiKey=` in a message for a credential.
  const onCommandLine = keys.map((key) => `--input ${key}=<value>`).join(' ');
  throw stateError(
    'invalid_argument',
    `checkpoint ${document.metadata.id}: ${one ? 'input' : 'inputs'} ${named} ${one ? 'is' : 'are'} stored as ${REDACTED} (checkpoints never hold a credential) and work that has not completed uses ${one ? 'it' : 'them'}: continued without ${one ? 'it' : 'them'}, the model would be sent the text ${REDACTED}; pass ${one ? 'it' : 'them'} again with the resume or fork: kickoff({ fromCheckpoint, ${inCode} }) or continueFromCheckpoint({ …, ${inCode} }) in code, ${onCommandLine} with crewline checkpoint resume or fork`,
    { details: { redactedInputs: keys } },
  );
}

/** Whether `value` is `[REDACTED]` or holds it in a plain record or array (a field redacted by name). */
function holdsRedacted(value: unknown, seen: Set<object>, depth: number): boolean {
  if (value === REDACTED) return true;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.some((item) => holdsRedacted(item, seen, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).some((item) => holdsRedacted(item, seen, depth + 1));
}

interface TemplateUse {
  /** Who fills these templates when the run continues: `task 2 ("…")`, `agent "Caller"`. */
  owner: string;
  placeholders: Set<string>;
}

function use(owner: string, templates: readonly string[]): TemplateUse {
  return { owner, placeholders: new Set(templates.flatMap((template) => findPlaceholders(template))) };
}

function agentUse(agent: Pick<AgentDefinitionData, 'role' | 'goal' | 'backstory'>): TemplateUse {
  return use(`agent "${agent.role}"`, [agent.role, agent.goal, agent.backstory]);
}

/** The templates the run's owner fills again when it continues (see {@link redactedInputsInUse}). */
function templatesOfUnfinishedWork(document: CheckpointDocument): TemplateUse[] {
  try {
    return templatesOf(document.entities[0]);
  } catch (error) {
    // Damaged or newer data: the restore that reads it says so, naming the field or version; this
    // check has nothing to add.
    if (
      CrewlineError.hasCode(error, 'corrupt_checkpoint') ||
      CrewlineError.hasCode(error, 'unsupported_version')
    )
      return [];
    throw error;
  }
}

function templatesOf(owner: EntitySnapshot | undefined): TemplateUse[] {
  if (owner?.kind === 'agent') {
    const agent = parseAgentData(owner);
    return agent.status === 'completed' ? [] : [agentUse(agent)];
  }
  if (owner?.kind !== 'crew') return [];
  const crew = parseCrewData(owner);
  const uses: TemplateUse[] = [];
  const agents = new Set<number>();
  let unassigned = false;
  crew.tasks.forEach((task, index) => {
    if (task.status === 'completed') return;
    uses.push(
      use(`task ${index + 1} (${JSON.stringify(taskLabel(task.name, task.description))})`, [
        task.description,
        task.expectedOutput,
      ]),
    );
    if (task.agent === null) unassigned = true;
    else agents.add(task.agent);
  });
  if (uses.length === 0) return [];
  // A manager hands the work to any agent of its crew; a task without an agent is given one.
  const everyAgent = crew.process === 'hierarchical' || unassigned;
  crew.agents.forEach((agent, index) => {
    if (everyAgent || agents.has(index)) uses.push(agentUse(agent));
  });
  if (crew.manager !== null) uses.push(agentUse(crew.manager));
  return uses;
}
