// Review R6-6 of 3c8977a: a credential given again started over an interrupted task when any of its
// delegations' conversations held [REDACTED], finished ones too. A finished delegation is never
// continued: only its answer goes on to the manager, so a key its coworker's tool echoed (saved as
// [REDACTED] in that coworker's conversation) reaches no model again, and starting the manager's task
// over paid again for the manager's calls and the whole delegation for nothing.
import { EventBus, REDACTED } from '@crewline/events';
import { type CheckpointDocument, readDocument } from '@crewline/runtime-state';
import { parseCrewData } from '@crewline/runtime-state/internal';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { Crew } from './crew.js';
import { DELEGATION_TOOL_NAME } from './delegation.js';
import { continuationSendsRedacted } from './interrupted-tasks.js';

const secret = 'sk-live-0123456789abcdefghij';

// Echoes the request it made, key and all, past the 80 characters of a tool result the offline
// model quotes in its answer: the coworker's conversation holds the key, its answer does not.
const fetchTool = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) =>
    `three facts about ${query}, each with its source and one caveat worth a sentence; request GET https://api.example/search?q=${query}&key=${secret}`,
});

function hierarchicalCrew(manager: OfflineModel, coworker: OfflineModel, provider?: InMemoryProvider): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Find facts',
    backstory: 'Calm',
    llm: coworker,
    tools: [fetchTool],
  });
  return new Crew({
    agents: [researcher],
    tasks: [new Task({ description: 'Report on {topic}', expectedOutput: 'a report' })],
    process: 'hierarchical',
    managerLlm: manager,
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

const managerScript = [
  { toolName: DELEGATION_TOOL_NAME, input: { coworker: 'Researcher', task: 'Find three facts about kelp' } },
];

/** The checkpoint right after the delegation's answer reached the manager, its second call not made. */
async function afterDelegation(
  provider: InMemoryProvider,
): Promise<{ id: string; document: CheckpointDocument }> {
  for (const each of (await provider.list('mem')).filter((one) => one.trigger === 'tool_usage_finished')) {
    const document = await readDocument(provider, 'mem', each.id);
    const task = parseCrewData(document.entities[0]!).tasks[0]!;
    const delegations = Object.values(task.delegations);
    const last = task.conversation?.messages.at(-1) as { role?: string } | undefined;
    if (delegations.length === 1 && delegations[0]!.finished && last?.role === 'tool')
      return { id: each.id, document };
  }
  throw new Error('no checkpoint after the delegation');
}

describe('a credential given again to a crew whose finished delegation held it as [REDACTED]', () => {
  it('continues the manager’s task: neither its call nor the delegation is paid again', async () => {
    const provider = new InMemoryProvider();
    const manager = offlineModel({ script: managerScript });
    const coworker = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    await hierarchicalCrew(manager, coworker, provider).kickoff({
      inputs: { apiKey: secret, topic: 'kelp' },
    });
    expect(manager.calls).toHaveLength(2);
    expect(coworker.calls).toHaveLength(2);
    const { id, document } = await afterDelegation(provider);
    const task = parseCrewData(document.entities[0]!).tasks[0]!;
    // What the test is about: only the finished delegation holds the text.
    expect(JSON.stringify(Object.values(task.delegations)[0]!.messages)).toContain(REDACTED);
    expect(JSON.stringify(task.conversation)).not.toContain(REDACTED);
    expect(task.systemPrompt).not.toContain(REDACTED);
    expect(interruptedTasksOutcome(document, { apiKey: secret })).toEqual({ action: 'continue' });
    manager.reset();
    coworker.reset();

    const logs = captureLogs();
    try {
      await hierarchicalCrew(manager, coworker).kickoff({
        inputs: { apiKey: secret },
        fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
        bus: new EventBus(),
      });
      // The checkpoint is older than its run's last one (expected here); no restart is warned of.
      logs.expect('is not the latest of its run');
      expect(logs.records.map((record) => record.message).join('\n')).not.toContain('was interrupted');
    } finally {
      logs.stop({ allowUnexpected: true });
    }
    // The manager's answer only; the coworker is not asked again.
    expect(manager.calls).toHaveLength(1);
    expect(coworker.calls).toHaveLength(0);
    expect(JSON.stringify(manager.calls[0]!.messages)).not.toContain(REDACTED);
  });
});

describe('continuationSendsRedacted', () => {
  const clean = { messages: [{ role: 'user', content: 'Report on kelp' }], finished: false };
  const holding = { messages: [{ role: 'tool', content: `key=${REDACTED}` }], finished: false };
  // The manager's conversation waiting for the result of its delegation `call` (saved by that id).
  const askCall = { type: 'tool-call', toolCallId: 'call', toolName: DELEGATION_TOOL_NAME, input: {} };
  const delegating = {
    messages: [...clean.messages, { role: 'assistant', content: [askCall] }],
    finished: false,
  };
  // ...and once given it (an error result of a failed delegation, say).
  const answered = {
    messages: [
      ...delegating.messages,
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call',
            toolName: DELEGATION_TOOL_NAME,
            output: { type: 'text', value: 'failed' },
          },
        ],
      },
    ],
    finished: false,
  };
  const task = (conversation: object, delegations: Record<string, object> = {}) =>
    continuationSendsRedacted({
      systemPrompt: 'You are the manager',
      conversation: conversation as typeof clean,
      delegations: delegations as Record<string, typeof clean>,
    });

  it('counts what a continuation sends on: unfinished conversations, and the answers of finished ones', () => {
    expect(task(clean)).toBe(false);
    expect(task(holding)).toBe(true);
    expect(
      continuationSendsRedacted({ systemPrompt: `key ${REDACTED}`, conversation: clean, delegations: {} }),
    ).toBe(true);
    // A delegation under way is continued: its messages go to the coworker's model again.
    expect(task(delegating, { call: holding })).toBe(true);
    // A finished one only hands its answer on (to a manager that may not hold it yet).
    expect(task(delegating, { call: { ...holding, finished: true, output: 'three facts' } })).toBe(false);
    expect(task(delegating, { call: { ...holding, finished: true, output: `facts, key ${REDACTED}` } })).toBe(
      true,
    );
    // One whose tool call has its result (a failed delegation's error) is never run again (review RC-1).
    expect(task(answered, { call: holding })).toBe(false);
    expect(task(answered, { call: { ...holding, finished: true, output: `key ${REDACTED}` } })).toBe(false);
    // The task's own finished conversation is not continued either: its answer is its output.
    expect(task({ ...holding, finished: true, output: 'the report' }, { call: holding })).toBe(false);
    expect(task({ ...clean, finished: true, output: `report ${REDACTED}` })).toBe(true);
  });
});
