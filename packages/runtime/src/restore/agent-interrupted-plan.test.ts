// The plan of a standalone agent's checkpoint says what its kickoff does (review RJ-4: the plan applied
// the crew's whole rule, so a changed input was planned as a restart while the agent continued, and a
// credential given again into a conversation holding [REDACTED] was planned as continuing while it
// started over).
import { EventBus, REDACTED } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { interruptedTasksOutcome } from './saved-interrupted-tasks.js';

const secret = 'sk-live-0123456789abcdefghij';
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `GET https://api.example/search?q=${query}&key=${secret} -> 3 facts`,
});

function researcher(model: OfflineModel, provider?: InMemoryProvider): Agent {
  return new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Calm',
    llm: model,
    tools: [lookup],
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

/** The plan for `inputs` over the checkpoint written at `trigger`, and the model calls the resume makes. */
async function planAndRun(
  request: string,
  trigger: string,
  inputs: Record<string, unknown>,
): Promise<{ plan: unknown; calls: number }> {
  const provider = new InMemoryProvider();
  const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
  await researcher(model, provider).kickoff(request, { inputs: { apiKey: secret, topic: 'kelp' } });
  const id = (await provider.list('mem')).filter((each) => each.trigger === trigger).at(-1)!.id;
  const document = await readDocument(provider, 'mem', id);
  expect(JSON.stringify(document)).toContain(REDACTED);
  const plan = interruptedTasksOutcome(document, inputs);
  model.reset();
  const logs = captureLogs();
  try {
    await researcher(model).kickoff(undefined, {
      inputs,
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
      bus: new EventBus(),
    });
  } finally {
    logs.stop({ allowUnexpected: true });
  }
  return { plan, calls: model.calls.length };
}

describe("the plan of a standalone agent's checkpoint", () => {
  it('continues with a changed input, as the kickoff does', async () => {
    const { plan, calls } = await planAndRun('Research kelp', 'tool_usage_started', {
      apiKey: secret,
      topic: 'tides',
    });
    expect(plan).toEqual({ action: 'continue' });
    expect(calls).toBe(1);
  });

  it('restarts for a credential given again into a conversation holding [REDACTED], as the kickoff does', async () => {
    const { plan, calls } = await planAndRun('Research kelp', 'tool_usage_finished', { apiKey: secret });
    expect(plan).toMatchObject({ action: 'restart', cause: 'credential-given-again' });
    expect(calls).toBe(2);
  });

  it('continues when the request it ran on holds [REDACTED] too (no messages are given)', async () => {
    const { plan, calls } = await planAndRun(`Research kelp with key ${secret}`, 'tool_usage_finished', {
      apiKey: secret,
    });
    expect(plan).toEqual({ action: 'continue' });
    expect(calls).toBe(1);
  });
});
