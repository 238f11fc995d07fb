// A hierarchical task started over pays again for its delegations' calls too: the warning, the
// interrupted task's completedCalls (the CLI's and the worker's count) and the calls made agree
// (review RC-5: they counted the manager's own conversation only, 1 said where 3 were made).
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { parseCrewData } from '@crewline/runtime-state/internal';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { interruptedTasks, interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { Crew } from './crew.js';
import { DELEGATION_TOOL_NAME } from './delegation.js';
import { interruptedTaskWords } from './interrupted-tasks.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `facts about ${query}`,
});
function crew(manager: OfflineModel, coworker: OfflineModel, provider?: InMemoryProvider): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Find facts',
    backstory: 'Calm',
    llm: coworker,
    tools: [lookup],
  });
  return new Crew({
    agents: [researcher],
    tasks: [new Task({ description: 'Report on {topic}', expectedOutput: 'a report' })],
    process: 'hierarchical',
    managerLlm: manager,
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

it("counts the delegations' calls in what starting over costs", async () => {
  const provider = new InMemoryProvider();
  const manager = offlineModel({
    script: [{ toolName: DELEGATION_TOOL_NAME, input: { coworker: 'Researcher', task: 'Find facts' } }],
  });
  const coworker = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
  await crew(manager, coworker, provider).kickoff({ inputs: { topic: 'kelp' } });
  let id = '';
  let document: Awaited<ReturnType<typeof readDocument>> | undefined;
  for (const each of await provider.list('mem')) {
    const read = await readDocument(provider, 'mem', each.id);
    const task = parseCrewData(read.entities[0]!).tasks[0]!;
    const last = task.conversation?.messages.at(-1) as { role?: string } | undefined;
    const delegation = Object.values(task.delegations)[0];
    if (delegation?.finished && last?.role === 'tool' && !task.conversation!.finished) {
      id = each.id;
      document = read;
    }
  }
  expect(document).toBeDefined();
  const outcome = interruptedTasksOutcome(document!, { topic: 'tides' });
  const planned = interruptedTasks(document!)[0]!.completedCalls;
  manager.reset();
  coworker.reset();
  const logs = captureLogs();
  try {
    await crew(manager, coworker).kickoff({
      inputs: { topic: 'tides' },
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
      bus: new EventBus(),
    });
    expect(outcome).toMatchObject({ action: 'restart', cause: 'changed-inputs' });
    expect(
      logs.records
        .filter((record) => record.message.includes('was interrupted'))
        .map((record) => record.message),
    ).toEqual([
      `Crew "crew" kickoff: task 1 "Report on {topic}" was interrupted; ${interruptedTaskWords.restart['changed-inputs'].warning}; the 3 model calls it had made are made again`,
    ]);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
  // Made again: the manager's first call and the coworker's two (the manager's last is its new answer).
  expect(planned).toBe(3);
  expect(manager.calls.length - 1 + coworker.calls.length).toBe(3);
});
