// A restored standalone agent starts its interrupted conversation over for one cause only: a
// credential saved as [REDACTED] given again while that unfinished conversation holds the text. A
// changed input does not (its system prompt is built from the inputs at each call, its request never
// is, so continuing uses the new ones), nor does anything once its final answer is saved (review RG:
// 066faba applied the crew's whole rule, and such resumes paid their saved calls again).
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
  execute: ({ query }) => `3 facts on ${query}`,
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

/** Runs the agent once (a tool call, then the answer) and returns the id of the last `trigger` checkpoint. */
async function checkpointAt(
  provider: InMemoryProvider,
  model: OfflineModel,
  trigger: string,
  request: string,
  inputs: Record<string, unknown>,
): Promise<string> {
  await researcher(model, provider).kickoff(request, { inputs });
  return (await provider.list('mem')).filter((each) => each.trigger === trigger).at(-1)!.id;
}

async function resume(
  model: OfflineModel,
  provider: InMemoryProvider,
  id: string,
  inputs: Record<string, unknown>,
  options: { messages?: string; bus?: EventBus } = {},
): Promise<string[]> {
  model.reset();
  const logs = captureLogs();
  try {
    await researcher(model).kickoff(options.messages, {
      inputs,
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
      bus: options.bus ?? new EventBus(),
    });
    // A resume of a checkpoint the run went past warns of its new branch too: not what is checked.
    return logs.records
      .filter((record) => record.level === 'warn' && record.message.includes('interrupted'))
      .map((record) => record.message);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
}

function script(): OfflineModel {
  return offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
}

describe('a restored standalone agent and its restart rule', () => {
  it('continues with a changed input, its system prompt built from it, paying no saved call again', async () => {
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'tool_usage_started', 'Research kelp', { topic: 'kelp' });
    const warnings = await resume(model, provider, id, { topic: 'tides' });
    expect(warnings).toEqual([]);
    // The tool runs, then one call for the answer: the saved call is not made again.
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.system).toContain('Research tides');
  });

  it('continues with an input it never saved (no template reads it)', async () => {
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'tool_usage_started', 'Research kelp', { topic: 'kelp' });
    const warnings = await resume(model, provider, id, { note: 'for the Tuesday report' });
    expect(warnings).toEqual([]);
    expect(model.calls).toHaveLength(1);
  });

  it('hands back its saved answer with no call once its conversation finished, inputs changed or not', async () => {
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'llm_call_completed', 'Research kelp', {
      topic: 'kelp',
      apiKey: secret,
    });
    const warnings = await resume(model, provider, id, { topic: 'tides', apiKey: secret });
    expect(warnings).toEqual([]);
    expect(model.calls).toHaveLength(0);
  });

  it('continues, warning, when its saved request holds [REDACTED] and no messages are given (the CLI path)', async () => {
    // Review RJ-1: it was refused, and the CLI, the TUI and the worker, which give no messages, could
    // neither resume nor fork such a checkpoint.
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'tool_usage_started', `Research kelp with key ${secret}`, {
      apiKey: secret,
      topic: 'kelp',
    });
    expect(JSON.stringify(await readDocument(provider, 'mem', id))).toContain(REDACTED);
    const warnings = await resume(model, provider, id, { apiKey: secret, topic: 'kelp' });
    expect(warnings).toEqual([expect.stringContaining('pass the request again')]);
    // The tool runs, then one call for the answer: the saved call is not made again.
    expect(model.calls).toHaveLength(1);
  });

  it('starts over from the request given again when its saved request holds [REDACTED]', async () => {
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'tool_usage_started', `Research kelp with key ${secret}`, {
      apiKey: secret,
      topic: 'kelp',
    });
    await resume(
      model,
      provider,
      id,
      { apiKey: secret, topic: 'kelp' },
      { messages: `Research kelp with key ${secret}` },
    );
    const sent = JSON.stringify(model.calls.map((call) => [call.system, call.messages]));
    expect(sent).not.toContain(REDACTED);
    expect(sent).toContain(secret);
    expect(model.calls).toHaveLength(2);
  });

  it('starts over for a credential given again without a new lite_agent_execution_started', async () => {
    const provider = new InMemoryProvider();
    const model = script();
    const id = await checkpointAt(provider, model, 'tool_usage_started', `Research kelp with key ${secret}`, {
      apiKey: secret,
      topic: 'kelp',
    });
    const bus = new EventBus();
    const emitted: string[] = [];
    bus.onAny((_source: unknown, event: { type: string }) => void emitted.push(event.type));
    const warnings = await resume(
      model,
      provider,
      id,
      { apiKey: secret },
      { messages: `Research kelp with key ${secret}`, bus },
    );
    expect(warnings).toEqual([
      `Agent "Researcher" kickoff: its conversation was interrupted; ${interruptedTaskWords.restart['credential-given-again'].warning}; the 1 model call it had made is made again`,
    ]);
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls.map((call) => call.messages))).not.toContain(REDACTED);
    expect(emitted).not.toContain('lite_agent_execution_started');
    expect(emitted).toContain('lite_agent_execution_completed');
  });
});
