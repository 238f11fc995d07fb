// A standalone agent (no crew) resumed with its credential given again, whose saved conversation
// holds it as [REDACTED] (its tool echoed the request URL with the key): the crew's credential cause
// applies, so it starts over and sends the model the real key, never the marker (review RC-6: only
// Crew.kickoff applied it, and the agent continued, sending `…&key=[REDACTED]`). A changed input
// alone does not restart it (agent-resume-restart-rule.test.ts).
import { EventBus, REDACTED } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { interruptedTaskWords } from '../crew/interrupted-tasks.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';
import { Agent } from './agent.js';

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

/** The checkpoint written once the tool's result (holding the key) is in the conversation. */
async function afterToolResult(provider: InMemoryProvider, model: OfflineModel): Promise<string> {
  await researcher(model, provider).kickoff('Research kelp', { inputs: { apiKey: secret, topic: 'kelp' } });
  const after = (await provider.list('mem')).filter((each) => each.trigger === 'tool_usage_finished').at(-1)!;
  const document = await readDocument(provider, 'mem', after.id);
  expect(JSON.stringify(document)).toContain(REDACTED);
  return after.id;
}

async function resume(
  model: OfflineModel,
  provider: InMemoryProvider,
  id: string,
  inputs: Record<string, unknown>,
): Promise<string[]> {
  model.reset();
  const logs = captureLogs();
  try {
    await researcher(model).kickoff(undefined, {
      inputs,
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
      bus: new EventBus(),
    });
    // A resume of a checkpoint the run went past warns of its new branch too: not what is checked.
    return logs.records
      .filter((record) => record.level === 'warn' && record.message.includes('interrupted'))
      .map((record) => record.message);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
}

describe('a standalone agent resumed with its credential given again', () => {
  it('starts over, saying why and what it costs, and never sends the model [REDACTED]', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    const id = await afterToolResult(provider, model);
    const warnings = await resume(model, provider, id, { apiKey: secret });
    const sent = JSON.stringify(model.calls.map((call) => [call.system, call.messages]));
    expect(sent).not.toContain(REDACTED);
    // Started over: the tool call is asked for again, then the answer.
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain('Research kelp');
    expect(warnings).toEqual([
      `Agent "Researcher" kickoff: its conversation was interrupted; ${interruptedTaskWords.restart['credential-given-again'].warning}; the 1 model call it had made is made again`,
    ]);
  });

  it('with another input changed too, starts over for the credential (the change alone would not)', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    const id = await afterToolResult(provider, model);
    const warnings = await resume(model, provider, id, { apiKey: secret, topic: 'tides' });
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls.map((call) => call.messages))).not.toContain(REDACTED);
    expect(model.calls[0]!.system).toContain('Research tides');
    expect(warnings).toEqual([
      `Agent "Researcher" kickoff: its conversation was interrupted; ${interruptedTaskWords.restart['credential-given-again'].warning}; the 1 model call it had made is made again`,
    ]);
  });

  it('continues a conversation that holds no [REDACTED], paying nothing again (guard)', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    await researcher(model, provider).kickoff('Research kelp', { inputs: { apiKey: secret, topic: 'kelp' } });
    // Before the tool ran: the conversation holds the model's tool call only.
    const before = (await provider.list('mem'))
      .filter((each) => each.trigger === 'tool_usage_started')
      .at(-1)!;
    const warnings = await resume(model, provider, before.id, { apiKey: secret });
    expect(warnings).toEqual([]);
    // The tool runs, then one call for the answer: the saved call is not made again.
    expect(model.calls).toHaveLength(1);
  });
});
