import { CrewlineError } from '@crewline/events';
import { generateText, jsonSchema, Output, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OFFLINE_MARKER } from './offline-answer.js';
import { isOfflineModel, offlineModel } from './offline-model.js';

const taskPrompt =
  'Task: Summarise the quarterly revenue report for the board\nExpected output: three bullet points';

describe('offlineModel', () => {
  it('is an AI SDK v3 language model from the offline provider', () => {
    const model = offlineModel({ name: 'tester' });
    expect(model.specificationVersion).toBe('v3');
    expect(model.provider).toBe('offline');
    expect(model.modelId).toBe('tester');
    expect(isOfflineModel(model)).toBe(true);
    expect(isOfflineModel({ provider: 'offline' })).toBe(false);
  });

  it('says it is offline and answers about the task it was given', async () => {
    const { text } = await generateText({ model: offlineModel(), prompt: taskPrompt });
    expect(text.startsWith(OFFLINE_MARKER)).toBe(true);
    expect(text).toContain('Summarise the quarterly revenue report for the board');
    expect(text).toContain('three bullet points');
  });

  it('reads the task and expected output from a crew task prompt', async () => {
    const prompt =
      'Current task: Research electric bicycles in Oslo\n\nThis is the expected criteria for your final answer: five bullet points\nYou must return the actual complete content.';
    const { text } = await generateText({ model: offlineModel(), prompt });
    expect(text.split('\n').slice(0, 2)).toEqual([
      `${OFFLINE_MARKER} default answering: Research electric bicycles in Oslo`,
      'Format asked for: five bullet points',
    ]);
  });

  it('follows the context it is given, so an edited upstream output changes the answer', async () => {
    const ask = (research: string) =>
      generateText({
        model: offlineModel(),
        prompt: `Current task: Write a summary\n\nThis is the context you are working with:\n${research}`,
      });
    const original = await ask(`${OFFLINE_MARKER} default answering: Research AI\nKey points: chips`);
    const edited = await ask('Focus on energy use of data centres');
    expect(original.text).toContain(
      'Building on the context: default answering: Research AI Key points: chips',
    );
    expect(edited.text).toContain('Building on the context: Focus on energy use of data centres');
    const { text } = await generateText({ model: offlineModel(), prompt: taskPrompt });
    expect(text).not.toContain('Building on the context');
  });

  it('gives the same answer to the same prompt and a different one to a different prompt', async () => {
    const first = await generateText({ model: offlineModel(), system: 'be brief', prompt: taskPrompt });
    const again = await generateText({ model: offlineModel(), system: 'be brief', prompt: taskPrompt });
    const other = await generateText({
      model: offlineModel(),
      system: 'be brief',
      prompt: 'Task: Plan a team offsite',
    });
    expect(again.text).toBe(first.text);
    expect(other.text).not.toBe(first.text);
  });

  it('answers with exactly responseBytes UTF-8 bytes, multi-byte text included', async () => {
    for (const responseBytes of [64, 400, 2048]) {
      const { text } = await generateText({
        model: offlineModel({ responseBytes }),
        prompt: 'Task: résumé über 日本語 ✓',
      });
      expect(Buffer.byteLength(text)).toBe(responseBytes);
      expect(text).not.toContain('\uFFFD');
    }
    expect(() => offlineModel({ responseBytes: 8 })).toThrow(/responseBytes/);
  });

  it('ends a text answer on a whole key point: no sentence or word cut at responseBytes', async () => {
    for (const responseBytes of [400, 700, 2048]) {
      const { text } = await generateText({ model: offlineModel({ responseBytes }), prompt: taskPrompt });
      expect(Buffer.byteLength(text)).toBe(responseBytes);
      const lastLine = text
        .replace(/\n(?:\[[a-z ]*\.*\])?$/, '')
        .split('\n')
        .at(-1)!;
      expect(lastLine).toMatch(/^\d+\. [A-Z].*\.$/);
    }
  });

  it('fills up to responseBytes with a visible padding line, never trailing spaces', async () => {
    for (const responseBytes of [300, 400, 401, 417, 700, 2048]) {
      const { text } = await generateText({ model: offlineModel({ responseBytes }), prompt: taskPrompt });
      expect(Buffer.byteLength(text)).toBe(responseBytes);
      expect(text).not.toMatch(/ $/m);
      const lines = text.split('\n');
      const last = lines.at(-1)!;
      if (/^\d+\. /.test(last)) continue; // the key points fill it exactly
      expect(last).toMatch(/^\[offline padding\.*\]$/);
      expect(lines.at(-2)).toMatch(/^\d+\. [A-Z].*\.$/);
    }
  });

  it('pads an answer too full to give back a key point with a shorter padding line', async () => {
    const context = 'A small, checkable step on agents beats a large guess. '.repeat(5);
    for (let responseBytes = 300; responseBytes < 420; responseBytes += 1) {
      const { text } = await generateText({
        model: offlineModel({ responseBytes }),
        prompt: `Task: Summarise the report\n\nContext:\n${context}`,
      });
      expect(Buffer.byteLength(text)).toBe(responseBytes);
      expect(text).not.toMatch(/ $/m);
      expect(text).toMatch(/(?:\.|\n\[(?:offline padding|padding)?\.*\]|\.\n)$/);
    }
  });

  it('quotes a long context shortened where a word ends', async () => {
    const context = 'A small, checkable step on agents beats a large guess. '.repeat(5);
    const { text } = await generateText({
      model: offlineModel(),
      prompt: `Task: Write a summary\nContext:\n${context}`,
    });
    const quote = text.split('\n').find((line) => line.startsWith('Building on the context: '))!;
    expect(quote).toMatch(/ (A|small,|checkable|step|on|agents|beats|a|large|guess\.)…$/);
  });

  it('cuts at maxOutputTokens after the last whole sentence that fits, never inside a word', async () => {
    const full = await generateText({ model: offlineModel({ responseBytes: 2048 }), prompt: taskPrompt });
    for (const maxOutputTokens of [90, 120, 200]) {
      const result = await generateText({
        model: offlineModel({ responseBytes: 2048 }),
        prompt: taskPrompt,
        maxOutputTokens,
      });
      expect(result.finishReason).toBe('length');
      expect(result.text.length).toBeLessThanOrEqual(maxOutputTokens * 4);
      expect(result.text).toMatch(/[a-z]\.$/);
      expect(full.text.startsWith(result.text)).toBe(true);
    }
  });

  it('records every request with its settings, tools and provider options', async () => {
    const model = offlineModel();
    await generateText({
      model,
      system: {
        role: 'system',
        content: 'You are careful.',
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
      prompt: taskPrompt,
      maxOutputTokens: 300,
      temperature: 0.2,
      providerOptions: { offline: { note: 'x' } },
      tools: {
        lookup: tool({ description: 'Looks things up', inputSchema: z.object({ query: z.string() }) }),
      },
    });
    expect(model.calls).toHaveLength(1);
    const call = model.calls[0]!;
    expect(call.index).toBe(1);
    expect(call.kind).toBe('generate');
    expect(call.system).toBe('You are careful.');
    expect(call.systemProviderOptions).toEqual({ anthropic: { cacheControl: { type: 'ephemeral' } } });
    expect(call.userText).toBe(taskPrompt);
    expect(call.settings).toEqual({ maxOutputTokens: 300, temperature: 0.2 });
    expect(call.providerOptions).toEqual({ offline: { note: 'x' } });
    expect(call.tools.map((item) => item.name)).toEqual(['lookup']);
    expect(call.tools[0]!.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    model.reset();
    expect(model.calls).toHaveLength(0);
  });

  it('follows a script of tool calls by the number of assistant turns in the prompt', async () => {
    const model = offlineModel({
      script: [
        { toolName: 'lookup', input: { query: 'revenue' } },
        { toolCalls: [{ toolName: 'lookup', input: { query: 'costs' }, toolCallId: 'fixed' }] },
      ],
    });
    const tools = {
      lookup: tool({ description: 'Looks things up', inputSchema: z.object({ query: z.string() }) }),
    };
    const first = await generateText({ model, prompt: taskPrompt, tools });
    expect(first.toolCalls.map((call) => call.input)).toEqual([{ query: 'revenue' }]);
    expect(first.finishReason).toBe('tool-calls');
    const history = [
      { role: 'user' as const, content: taskPrompt },
      ...first.response.messages,
      {
        role: 'tool' as const,
        content: [
          {
            type: 'tool-result' as const,
            toolCallId: first.toolCalls[0]!.toolCallId,
            toolName: 'lookup',
            output: { type: 'text' as const, value: '42' },
          },
        ],
      },
    ];
    const second = await generateText({ model, messages: history, tools });
    expect(second.toolCalls.map((call) => [call.toolCallId, call.input])).toEqual([
      ['fixed', { query: 'costs' }],
    ]);
    // A fresh model given the same history picks the same step: the script position lives in the prompt.
    const fresh = offlineModel({
      script: [{ toolName: 'lookup', input: { query: 'revenue' } }, { text: 'done' }],
    });
    const resumed = await generateText({ model: fresh, messages: history, tools });
    expect(resumed.text).toBe('done');
    expect(resumed.toolCalls).toHaveLength(0);
  });

  it('answers instead of calling tools when none are offered or tool choice is none', async () => {
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'x' } }] });
    const tools = {
      lookup: tool({ description: 'Looks things up', inputSchema: z.object({ query: z.string() }) }),
    };
    const withoutTools = await generateText({ model, prompt: taskPrompt });
    expect(withoutTools.toolCalls).toHaveLength(0);
    const none = await generateText({ model, prompt: taskPrompt, tools, toolChoice: 'none' });
    expect(none.toolCalls).toHaveLength(0);
    expect(none.text.startsWith(OFFLINE_MARKER)).toBe(true);
  });

  it('fills a forced tool call with input that matches the tool schema', async () => {
    const model = offlineModel();
    const tools = {
      search: tool({
        description: 'Search',
        inputSchema: z.object({ query: z.string().min(3), limit: z.number().int().min(1).max(5) }),
      }),
    };
    const result = await generateText({ model, prompt: taskPrompt, tools, toolChoice: 'required' });
    expect(result.toolCalls).toHaveLength(1);
    const input = result.toolCalls[0]!.input as { query: string; limit: number };
    expect(
      z.object({ query: z.string().min(3), limit: z.number().int().min(1).max(5) }).parse(input),
    ).toEqual(input);
  });

  it('lets a script function decide per call', async () => {
    const model = offlineModel({
      script: (call) => (call.userText.includes('weather') ? { text: 'sunny' } : undefined),
    });
    expect((await generateText({ model, prompt: 'what is the weather' })).text).toBe('sunny');
    expect((await generateText({ model, prompt: 'Task: other' })).text.startsWith(OFFLINE_MARKER)).toBe(true);
  });

  it('answers JSON that satisfies the requested schema', async () => {
    const schema = z.object({
      title: z.string(),
      points: z.array(z.string()).min(3),
      priority: z.enum(['high', 'low']),
      score: z.number().min(10).max(20),
      email: z.string().email(),
      nested: z.object({ ok: z.boolean(), note: z.string().optional() }),
    });
    const result = await generateText({
      model: offlineModel(),
      prompt: taskPrompt,
      output: Output.object({ schema }),
    });
    expect(schema.parse(result.output)).toEqual(result.output);
    const again = await generateText({
      model: offlineModel(),
      prompt: taskPrompt,
      output: Output.object({ schema }),
    });
    expect(again.text).toBe(result.text);
  });

  it('answers a JSON object for a schemaless JSON request', async () => {
    const result = await generateText({ model: offlineModel(), prompt: taskPrompt, output: Output.json() });
    expect(result.output).toMatchObject({ answer: expect.stringContaining(OFFLINE_MARKER) });
  });

  it('cuts the answer at maxOutputTokens and reports the length finish reason', async () => {
    const result = await generateText({ model: offlineModel(), prompt: taskPrompt, maxOutputTokens: 1 });
    expect(result.finishReason).toBe('length');
    expect(result.text.length).toBeLessThanOrEqual(4);
    expect(result.usage.outputTokens).toBe(1);
  });

  it('estimates usage from prompt and answer lengths, or reports it unknown, or takes overrides', async () => {
    const estimated = await generateText({ model: offlineModel(), prompt: taskPrompt });
    expect(estimated.usage.inputTokens).toBe(Math.ceil(taskPrompt.length / 4));
    expect(estimated.usage.outputTokens).toBe(Math.ceil(estimated.text.length / 4));
    expect(estimated.usage.totalTokens).toBe(estimated.usage.inputTokens! + estimated.usage.outputTokens!);
    const unknown = await generateText({ model: offlineModel({ usage: false }), prompt: taskPrompt });
    expect(unknown.usage.inputTokens).toBeUndefined();
    const custom = await generateText({
      model: offlineModel({ usage: () => ({ inputTokens: 1000, cachedInputTokens: 600 }) }),
      prompt: taskPrompt,
    });
    expect(custom.usage.inputTokens).toBe(1000);
    expect(custom.usage.inputTokenDetails.cacheReadTokens).toBe(600);
    expect(custom.usage.inputTokenDetails.noCacheTokens).toBe(400);
  });

  it('simulates a prompt cache when asked: a repeated system prompt is a cache read', async () => {
    const system = 'You are a meticulous analyst. '.repeat(20);
    const model = offlineModel({ promptCache: true });
    const cold = await generateText({ model, system, prompt: taskPrompt });
    const warm = await generateText({ model, system, prompt: 'Task: another question' });
    expect(cold.usage.inputTokenDetails.cacheReadTokens).toBe(0);
    expect(warm.usage.inputTokenDetails.cacheReadTokens).toBe(Math.ceil(system.length / 4));
    const uncached = offlineModel();
    await generateText({ model: uncached, system, prompt: taskPrompt });
    const again = await generateText({ model: uncached, system, prompt: taskPrompt });
    expect(again.usage.inputTokenDetails.cacheReadTokens).toBe(0);
  });

  it('fails the listed calls (recording them) and the calls a predicate picks', async () => {
    const model = offlineModel({ failOn: [2] });
    await generateText({ model, prompt: 'one', maxRetries: 0 });
    const failure = await generateText({ model, prompt: 'two', maxRetries: 0 }).catch(
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(failure, 'model_error')).toBe(true);
    expect(String((failure as Error).message)).toContain('call 2');
    expect(model.calls).toHaveLength(2);
    const picky = offlineModel({
      failOn: (call) => (call.userText.includes('boom') ? 'rate limited' : false),
    });
    await expect(generateText({ model: picky, prompt: 'boom', maxRetries: 0 })).rejects.toThrow(
      /rate limited/,
    );
    await expect(generateText({ model: picky, prompt: 'fine', maxRetries: 0 })).resolves.toBeDefined();
  });

  it('waits latencyMs and stops waiting when the call is aborted', async () => {
    const model = offlineModel({ latencyMs: 60_000 });
    const controller = new AbortController();
    const pending = generateText({
      model,
      prompt: taskPrompt,
      abortSignal: controller.signal,
      maxRetries: 0,
    });
    controller.abort(new Error('stop now'));
    await expect(pending).rejects.toThrow(/stop now/);
    const quick = offlineModel({ latencyMs: () => 1 });
    await expect(generateText({ model: quick, prompt: taskPrompt })).resolves.toBeDefined();
  });

  it('streams the same answer it would generate, tool calls included', async () => {
    const generated = await generateText({ model: offlineModel(), prompt: taskPrompt });
    const model = offlineModel();
    const streamed = streamText({ model, prompt: taskPrompt });
    let text = '';
    for await (const chunk of streamed.textStream) text += chunk;
    expect(text).toBe(generated.text);
    expect(model.calls[0]!.kind).toBe('stream');
    const scripted = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'q' } }] });
    const withTools = streamText({
      model: scripted,
      prompt: taskPrompt,
      tools: {
        lookup: tool({
          description: 'Looks',
          inputSchema: jsonSchema<{ query: string }>({
            type: 'object',
            properties: { query: { type: 'string' } },
          }),
        }),
      },
    });
    expect((await withTools.toolCalls).map((call) => call.input)).toEqual([{ query: 'q' }]);
    expect(await withTools.finishReason).toBe('tool-calls');
  });
});
