import type { CheckpointDocument } from '../document.js';
import { nearestName } from '../internal/edit-distance.js';
import { decodeValue } from '../value-codec.js';
import { parseAgentData } from './agent-data.js';
import { parseCrewData } from './crew-data.js';
import { parseFlowData } from './flow-data.js';
import { findPlaceholders } from './placeholders.js';

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * The input names a checkpoint's run knows, sorted: its kickoff inputs, the `{placeholder}`s of its
 * templates (agents' role, goal and backstory, tasks' description and expected output) and the keys
 * of a flow's state (inputs go into the state). An input outside these changes nothing a run reads:
 * a typo, refused by every resume and fork that takes inputs (CLI, TUI, explorer, `runs fork`).
 */
export function knownInputNames(document: CheckpointDocument): string[] {
  const known = new Set<string>(Object.keys(recordOf(decodeValue<unknown>(document.inputs))));
  for (const entity of document.entities) {
    const templates: string[] = [];
    if (entity.kind === 'crew') {
      const data = parseCrewData(entity);
      for (const agent of [...data.agents, ...(data.manager ? [data.manager] : [])])
        templates.push(agent.role, agent.goal, agent.backstory);
      for (const task of data.tasks) templates.push(task.description, task.expectedOutput);
    } else if (entity.kind === 'agent') {
      const data = parseAgentData(entity);
      templates.push(data.role, data.goal, data.backstory);
    } else if (entity.kind === 'flow') {
      for (const key of Object.keys(recordOf(decodeValue<unknown>(parseFlowData(entity).state))))
        known.add(key);
    }
    for (const template of templates) for (const name of findPlaceholders(template)) known.add(name);
  }
  return [...known].sort();
}

/**
 * The first of `inputs`' keys the run does not know (see {@link knownInputNames}), with the known ones
 * and the known one it is probably a misspelling of (`nearest`, within two edits), if any.
 */
export function findUnknownInput(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>>,
): { key: string; known: string[]; nearest: string | undefined } | undefined {
  const known = knownInputNames(document);
  const key = Object.keys(inputs).find((name) => !known.includes(name));
  return key === undefined ? undefined : { key, known, nearest: nearestName(key, known) };
}

/**
 * Why continuing this checkpoint (with its edits already applied) would run nothing, or `undefined`
 * when something is left: a crew whose every task is completed, a completed flow or standalone
 * agent. Changed inputs do not change this — they re-template tasks that have not run, and a
 * completed task keeps what it was given — so a fork of such a checkpoint would write no checkpoint
 * and make no branch.
 */
export function nothingLeftToRun(document: CheckpointDocument): string | undefined {
  const owner = document.entities[0];
  if (owner === undefined) return undefined;
  if (owner.kind === 'crew') {
    const tasks = parseCrewData(owner).tasks;
    if (tasks.length === 0 || tasks.some((task) => task.status !== 'completed')) return undefined;
    return `every task of crew "${owner.name}" is completed`;
  }
  if (owner.kind === 'flow') {
    if (parseFlowData(owner).execution.status !== 'completed') return undefined;
    return `flow "${owner.name}" is completed`;
  }
  if (owner.kind === 'agent') {
    if (parseAgentData(owner).status !== 'completed') return undefined;
    return `agent "${owner.name}" is completed`;
  }
  return undefined;
}
