// A delegation whose coworker failed (its tool call already answered the manager with an error)
// stays an unfinished conversation in task.delegations. It is never continued, so a credential given
// again does not start the manager's task over for the [REDACTED] it holds: nothing a continuation
// sends holds it (review RC-1: it did, and the manager's calls were paid again).
import { EventBus, REDACTED } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { parseCrewData } from '@crewline/runtime-state/internal';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { pendingToolCalls } from '../agent-loop/conversation.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { Crew } from './crew.js';
import { DELEGATION_TOOL_NAME } from './delegation.js';

const secret = 'sk-live-0123456789abcdefghij';
const fetchTool = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `GET https://api.example/search?q=${query}&key=${secret} -> 3 facts`,
});

function crew(manager: OfflineModel, coworker: OfflineModel, provider?: InMemoryProvider): Crew {
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

it('a failed (never continued) delegation holding [REDACTED] does not start the manager over', async () => {
  const provider = new InMemoryProvider();
  const manager = offlineModel({
    script: [
      { toolName: DELEGATION_TOOL_NAME, input: { coworker: 'Researcher', task: 'Find facts about kelp' } },
    ],
  });
  // The coworker calls the tool (echoes the key), then its second call fails: the delegation throws.
  const coworker = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }], failOn: [2] });
  await crew(manager, coworker, provider).kickoff({ inputs: { apiKey: secret, topic: 'kelp' } });
  expect(manager.calls).toHaveLength(2);

  // The checkpoint where the manager holds the delegation's (error) result, its answer not asked yet.
  let found: { id: string; document: Awaited<ReturnType<typeof readDocument>> } | undefined;
  for (const each of await provider.list('mem')) {
    const document = await readDocument(provider, 'mem', each.id);
    const task = parseCrewData(document.entities[0]!).tasks[0]!;
    const last = task.conversation?.messages.at(-1) as { role?: string } | undefined;
    const delegation = Object.values(task.delegations)[0];
    if (
      task.conversation &&
      !task.conversation.finished &&
      last?.role === 'tool' &&
      delegation &&
      !delegation.finished
    )
      found = { id: each.id, document };
  }
  expect(found).toBeDefined();
  const task = parseCrewData(found!.document.entities[0]!).tasks[0]!;
  // Nothing a continuation sends holds the text: the manager's conversation is clean and the
  // delegation's tool call is answered (not pending), so the delegation is never run again.
  expect(JSON.stringify(task.conversation!.messages)).not.toContain(REDACTED);
  expect(task.systemPrompt).not.toContain(REDACTED);
  expect(pendingToolCalls(task.conversation as never)).toHaveLength(0);
  expect(JSON.stringify(Object.values(task.delegations)[0]!.messages)).toContain(REDACTED);
  expect(interruptedTasksOutcome(found!.document, { apiKey: secret })).toEqual({ action: 'continue' });

  manager.reset();
  coworker.reset();
  const logs = captureLogs();
  try {
    await crew(manager, coworker).kickoff({
      inputs: { apiKey: secret },
      fromCheckpoint: { restoreFrom: `mem#${found!.id}`, provider },
      bus: new EventBus(),
    });
    expect(logs.records.filter((record) => record.message.includes('was interrupted'))).toEqual([]);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
  // What a continuation costs: the manager's answer only; the coworker is not asked again.
  expect(manager.calls).toHaveLength(1);
  expect(coworker.calls).toHaveLength(0);
  expect(JSON.stringify(manager.calls.map((call) => call.messages))).not.toContain(REDACTED);
});
