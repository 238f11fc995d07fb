import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseEvent, EventBus } from '@crewline/events';
import { type CheckpointDocument, validateDocument } from '@crewline/runtime-state';
import { z } from 'zod';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import type { CrewOptions } from '../../crew/crew-options.js';
import {
  type OfflineModel,
  type OfflineModelOptions,
  offlineModel,
} from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';
import { defineTool } from '../../tools/define-tool.js';

/**
 * A fresh temporary directory; removed by the returned cleanup. The removal retries: JsonProvider
 * adds its read-by-id index entries (`.ids/`) in the background after a write has resolved, so a
 * test that cleans up right after a run can race one of them (ENOTEMPTY).
 */
export function temporaryDirectory(prefix = 'crewline-runtime-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    cleanup: () => rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }),
  };
}

/** Every checkpoint file under a JSON location, oldest first (ids sort by creation time). */
export function checkpointFiles(location: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(location, { recursive: true }) as string[];
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.endsWith('.json') && statSync(join(location, entry)).isFile())
    .map((entry) => join(location, entry))
    .sort((a, b) => (basename(a) < basename(b) ? -1 : 1));
}

/** JsonProvider's spare temp files: `.spare.<pid>.<8 hex>.tmp`. */
function isSpareFileName(entry: string): boolean {
  return /^\.spare\.\d+\.[0-9a-f]{8}\.tmp$/.test(basename(entry));
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function readCheckpoint(file: string): CheckpointDocument {
  return validateDocument(JSON.parse(readFileSync(file, 'utf8')));
}

/** Every file under `location` (checkpoints, temp files, anything but empty spares). */
export function allFiles(location: string): string[] {
  try {
    // `.ids/` and `.leases/` are JsonProvider's id index and run locks (temp files of checkpoint
    // writes sit inside branch directories and are still counted). An empty spare temp file is one
    // created ahead for the next write (JsonProvider's spare-files.ts), holding nothing yet; one with
    // bytes in it is a write in progress and is counted like any temp file.
    return (readdirSync(location, { recursive: true }) as string[]).filter((entry) => {
      if (entry.startsWith('.')) return false;
      const info = statSync(join(location, entry));
      return info.isFile() && !(isSpareFileName(entry) && info.size === 0);
    });
  } catch {
    return [];
  }
}

/** A tool the offline model is scripted to call once per conversation. */
export const lookupTool = defineTool({
  name: 'lookup',
  description: 'Looks a subject up in the team notes',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `notes about ${query}: three facts, one caveat`,
});

/** An offline model that calls `lookup` once in each conversation, then answers. */
export function toolUsingModel(options: OfflineModelOptions = {}): OfflineModel {
  return offlineModel({ script: [{ toolName: 'lookup', input: { query: 'the subject' } }], ...options });
}

export interface ThreeTaskCrew {
  crew: Crew;
  researcher: Agent;
  writer: Agent;
  reviewer: Agent;
}

/** The crew used across the checkpoint tests: three agents, three tasks, each task one tool call. */
export function threeTaskCrew(
  model: OfflineModel | string,
  options: Partial<CrewOptions> = {},
): ThreeTaskCrew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Expert researcher',
    llm: model,
    tools: [lookupTool],
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Expert writer',
    llm: model,
    tools: [lookupTool],
  });
  const reviewer = new Agent({
    role: 'Reviewer',
    goal: 'Review',
    backstory: 'Careful editor',
    llm: model,
    tools: [lookupTool],
  });
  const crew = new Crew({
    name: 'research-crew',
    agents: [researcher, writer, reviewer],
    tasks: researchWriteReview(researcher, writer, reviewer),
    ...options,
  });
  return { crew, researcher, writer, reviewer };
}

export { offlineModel };

/** The research → write → review tasks every three-agent test crew runs. */
export function researchWriteReview(researcher: Agent, writer: Agent, reviewer: Agent): Task[] {
  return [
    new Task({
      name: 'research',
      description: 'Research {topic} trends',
      expectedOutput: 'bullets',
      agent: researcher,
    }),
    new Task({
      name: 'write',
      description: 'Write a summary about {topic}',
      expectedOutput: 'paragraph',
      agent: writer,
    }),
    new Task({
      name: 'review',
      description: 'Review the summary',
      expectedOutput: 'final text',
      agent: reviewer,
    }),
  ];
}

/** Every event emitted on `bus` from now on, in order. */
export function recordEvents(bus: EventBus): BaseEvent[] {
  const events: BaseEvent[] = [];
  bus.onAny((_source: unknown, event: BaseEvent) => void events.push(event));
  return events;
}
