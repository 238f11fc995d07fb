import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { EntitySnapshot } from '../document.js';
import { type CrewData, parseCrewData, shownCrewStatus, type TaskData, toCrewData } from './crew-data.js';
import { type CrewEntry, editTaskOutputs, editTaskOutputsInDocument } from './crew-edit.js';
import { memoryItemId, rememberText, type ShortTermMemoryData } from './memory-data.js';
import { findPlaceholders } from './placeholders.js';

const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3, cachedInputTokens: 0 };
const emptyMemory = (): ShortTermMemoryData => ({ kind: 'short-term-memory', version: 1, items: [] });

function agent(role: string, memory: ShortTermMemoryData | null = null) {
  return {
    id: `agent-${role}`,
    role,
    goal: `${role} {topic}`,
    backstory: 'Expert',
    llm: 'offline:test',
    tools: [],
    maxIterations: 5,
    checkpoint: null,
    knowledge: null,
    memory,
  };
}

function task(index: number, status: TaskData['status'], agentIndex: number): TaskData {
  return {
    id: `task-${index}`,
    name: `step-${index}`,
    description: `Step ${index} about {topic}`,
    expectedOutput: 'text',
    agent: agentIndex,
    context: null,
    outputSchema: null,
    status,
    startedEmitted: status !== 'pending',
    output:
      status === 'completed'
        ? {
            raw: `output ${index}`,
            description: `Step ${index} about AI`,
            expectedOutput: 'text',
            agentRole: agentIndex === 0 ? 'Researcher' : 'Writer',
            usage,
            edited: false,
          }
        : null,
    systemPrompt: status === 'running' ? 'system' : null,
    conversation: status === 'running' ? { messages: [], llmCalls: 1, finished: false, usage } : null,
    delegations: {},
  };
}

function crewData(statuses: TaskData['status'][], memory = false): Omit<CrewData, 'version'> {
  return {
    name: 'Research',
    process: 'sequential',
    memory,
    cachePreload: false,
    cachePreloadStrategy: 'parallel',
    checkpoint: null,
    status: 'running',
    kickoffStarted: true,
    inputs: { json: { topic: 'AI' } },
    agents: [
      agent('Researcher', memory ? emptyMemory() : null),
      agent('Writer', memory ? emptyMemory() : null),
    ],
    manager: null,
    tasks: statuses.map((status, index) => task(index, status, index % 2)),
    memoryState: memory ? emptyMemory() : null,
    knowledge: null,
    probeUsage: usage,
  };
}

function snapshot(data: Omit<CrewData, 'version'>): EntitySnapshot {
  return { kind: 'crew', id: 'crew-1', name: 'Research', data: toCrewData(data) };
}

const noSchema = { structuredOutput: () => undefined, now: '2026-01-01T00:00:00.000Z' };

function corruptMessage(value: EntitySnapshot): string {
  try {
    parseCrewData(value);
  } catch (error) {
    expect(CrewlineError.hasCode(error, 'corrupt_checkpoint')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected parseCrewData to throw');
}

describe('crew data', () => {
  it('reads back what the writer wrote', () => {
    const data = crewData(['completed', 'running', 'pending']);
    expect(parseCrewData(snapshot(data))).toEqual({ version: 1, ...data });
  });

  it('refuses a damaged field with a corrupt_checkpoint error naming the crew and the field', () => {
    const damaged = snapshot(crewData(['completed']));
    (damaged.data.tasks as { status: unknown }[])[0]!.status = 'done';
    expect(corruptMessage(damaged)).toMatch(/crew "Research".*tasks\.0\.status/);
    const noRaw = snapshot(crewData(['completed']));
    (noRaw.data.tasks as { output: Record<string, unknown> }[])[0]!.output.raw = 42;
    expect(corruptMessage(noRaw)).toMatch(/tasks\.0\.output\.raw/);
    const completedWithout = snapshot(crewData(['completed']));
    (completedWithout.data.tasks as { output: unknown }[])[0]!.output = null;
    expect(corruptMessage(completedWithout)).toMatch(/tasks\.0\.output/);
  });

  it('refuses crew data newer than this code understands', () => {
    const newer = snapshot(crewData([]));
    newer.data.version = 2;
    expect(() => parseCrewData(newer)).toThrow(/data version 2/);
  });

  it('shows a crew saved as running with every task completed as completed', () => {
    expect(shownCrewStatus('running', 2, 2)).toBe('completed');
    expect(shownCrewStatus('running', 1, 2)).toBe('running');
    expect(shownCrewStatus('failed', 2, 2)).toBe('failed');
    expect(shownCrewStatus('running', 0, 0)).toBe('running');
  });

  it('finds {placeholders} in a template', () => {
    expect(findPlaceholders('Research {topic} for {audience}, {topic} again, not {1x} or { x }')).toEqual([
      'topic',
      'audience',
    ]);
  });
});

describe('editing task outputs', () => {
  const crew = (data: Omit<CrewData, 'version'>): CrewEntry => ({
    id: 'crew-1',
    data: { version: 1, ...data },
  });

  it('completes the edited task, invalidates every later one and keeps earlier ones as they were', () => {
    const before = crew(crewData(['completed', 'completed', 'running', 'pending']));
    const [after] = editTaskOutputs([before], { 1: 'NEW' }, noSchema);
    expect(after!.tasks.map((stored) => stored.status)).toEqual([
      'completed',
      'completed',
      'pending',
      'pending',
    ]);
    expect(after!.tasks[0]).toBe(before.data.tasks[0]);
    expect(after!.tasks[1]!.output).toMatchObject({ raw: 'NEW', edited: true, agentRole: 'Writer', usage });
    expect(after!.tasks[2]).toMatchObject({ conversation: null, systemPrompt: null, startedEmitted: false });
    expect(before.data.tasks[2]!.status).toBe('running'); // the input is not changed
  });

  it('remembers the edited output in the crew memory and its worker agent only, as a run does', () => {
    const data = crewData(['completed', 'completed', 'completed'], true);
    const metadata = (index: number, role: string) => ({
      task: `step-${index}`,
      agent: role,
      crewId: 'crew-1',
      taskIndex: index,
    });
    // What the run saved: every output in the crew memory, each in its agent's.
    data.tasks.forEach((stored, index) => {
      const role = index % 2 === 0 ? 'Researcher' : 'Writer';
      data.memoryState = rememberText(data.memoryState!, stored.output!.raw, metadata(index, role));
      data.agents[index % 2]!.memory = rememberText(
        data.agents[index % 2]!.memory!,
        stored.output!.raw,
        metadata(index, role),
      );
    });
    const [after] = editTaskOutputs([crew(data)], { 1: 'EDITED' }, noSchema);
    const texts = (memory: ShortTermMemoryData | null) => memory!.items.map((item) => item.text);
    expect(texts(after!.memoryState)).toEqual(['output 0', 'EDITED']);
    expect(texts(after!.agents[0]!.memory)).toEqual(['output 0']);
    expect(texts(after!.agents[1]!.memory)).toEqual(['EDITED']);
    expect(after!.agents[1]!.memory!.items[0]!.id).toBe(memoryItemId('EDITED', metadata(1, 'Writer')));
  });

  it('counts tasks across crews and invalidates later crews too', () => {
    const first = crew(crewData(['completed', 'completed']));
    const second = {
      id: 'crew-2',
      data: { ...crew(crewData(['completed'])).data, status: 'completed' as const },
    };
    const [one, two] = editTaskOutputs([first, second], { 0: 'A' }, noSchema);
    expect(one!.tasks.map((stored) => stored.status)).toEqual(['completed', 'pending']);
    expect(two!.tasks.map((stored) => stored.status)).toEqual(['pending']);
    expect(two!.status).toBe('running');
    expect(() => editTaskOutputs([first, second], { 3: 'x' }, noSchema)).toThrow(/out of range/);
  });

  it('stores the structured value the caller checked, and refuses what the caller refuses', () => {
    const options = {
      structuredOutput: (raw: string) => {
        if (!raw.startsWith('{')) throw new Error('not JSON');
        return { json: JSON.parse(raw) };
      },
    };
    const [after] = editTaskOutputs([crew(crewData(['completed']))], { 0: '{"score":7}' }, options);
    expect(after!.tasks[0]!.output!.structured).toEqual({ json: { score: 7 } });
    expect(() => editTaskOutputs([crew(crewData(['completed']))], { 0: 'no' }, options)).toThrow(/not JSON/);
  });

  it('edits a document through the parser and writes it back in the stored shape', () => {
    const document = {
      entities: [snapshot(crewData(['completed', 'completed']))],
    } as unknown as Parameters<typeof editTaskOutputsInDocument>[0];
    const edited = editTaskOutputsInDocument(document, { 0: 'EDITED' }, noSchema);
    const data = parseCrewData(edited.entities[0]!);
    expect(data.tasks.map((stored) => stored.output?.raw ?? null)).toEqual(['EDITED', null]);
    const damaged = structuredClone(document);
    (damaged.entities[0]!.data.tasks as { status: unknown }[])[1]!.status = 'done';
    expect(() => editTaskOutputsInDocument(damaged, { 0: 'x' }, noSchema)).toThrow(/tasks\.1\.status/);
  });
});
