import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { cutAtSentence, digest } from './offline-answer.js';
import type { OfflineModelCall, OfflineModelOptions } from './offline-options.js';
import { estimateTokens, messageText, stableJson } from './prompt-text.js';

/** One offline answer, ready to be returned by `doGenerate` or replayed by `doStream`. */
export interface Answer {
  content: LanguageModelV3Content[];
  finishReason: LanguageModelV3FinishReason;
  usage: LanguageModelV3Usage;
  text: string;
}

/**
 * Applies `maxOutputTokens` (cutting the answer like a provider would) and computes usage: estimated,
 * overridden, or unknown, with simulated prompt-cache reads when enabled.
 */
export function finish(
  call: OfflineModelCall,
  content: LanguageModelV3Content[],
  options: OfflineModelOptions,
  cachedSystems: Set<string>,
): Answer {
  let finishReason: LanguageModelV3FinishReason = content.some((part) => part.type === 'tool-call')
    ? { unified: 'tool-calls', raw: 'tool_calls' }
    : { unified: 'stop', raw: 'stop' };
  const maximum = call.settings.maxOutputTokens;
  let outputText = content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'tool-call' ? part.input : ''))
    .join('');
  if (maximum !== undefined && finishReason.unified === 'stop' && estimateTokens(outputText) > maximum) {
    // Like a real provider, the answer stops at the token limit and the finish reason says so; unlike
    // a bare cut, it stops after the last whole sentence that fits (never inside a word).
    outputText = cutAtSentence(outputText, Math.max(0, maximum * 4));
    content = [{ type: 'text', text: outputText }];
    finishReason = { unified: 'length', raw: 'length' };
  }
  const promptText = [
    ...call.prompt.map(messageText),
    ...call.tools.map((tool) => `${tool.name} ${tool.description ?? ''} ${stableJson(tool.inputSchema)}`),
  ].join('\n');
  let cacheRead = 0;
  if (options.promptCache && call.system !== undefined) {
    for (const seen of cachedSystems) {
      if (call.system.startsWith(seen)) cacheRead = Math.max(cacheRead, estimateTokens(seen));
    }
    cachedSystems.add(call.system);
  }
  const estimated = {
    inputTokens: estimateTokens(promptText),
    outputTokens: estimateTokens(outputText),
    cachedInputTokens: cacheRead,
  };
  const override = typeof options.usage === 'function' ? options.usage(call, outputText) : undefined;
  const counts = { ...estimated, ...override };
  const known = options.usage !== false;
  const usage: LanguageModelV3Usage = {
    inputTokens: {
      total: known ? counts.inputTokens : undefined,
      noCache: known ? Math.max(0, counts.inputTokens - counts.cachedInputTokens) : undefined,
      cacheRead: known ? counts.cachedInputTokens : undefined,
      cacheWrite: known ? 0 : undefined,
    },
    outputTokens: {
      total: known ? counts.outputTokens : undefined,
      text: known ? counts.outputTokens : undefined,
      reasoning: known ? 0 : undefined,
    },
  };
  return { content, finishReason, usage, text: outputText };
}

/** The answer as a stream of parts, the way a streaming provider delivers it. */
export function streamOf(result: Answer, name: string): ReadableStream<LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    {
      type: 'response-metadata',
      id: `offline-${digest(result.text).slice(0, 16)}`,
      modelId: name,
      timestamp: new Date(),
    },
  ];
  result.content.forEach((part, index) => {
    if (part.type === 'text') {
      const id = `text-${index}`;
      parts.push({ type: 'text-start', id });
      for (let offset = 0; offset < part.text.length; offset += 32) {
        parts.push({ type: 'text-delta', id, delta: part.text.slice(offset, offset + 32) });
      }
      parts.push({ type: 'text-end', id });
    } else if (part.type === 'tool-call') {
      parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
      parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta: part.input });
      parts.push({ type: 'tool-input-end', id: part.toolCallId });
      parts.push(part);
    }
  });
  parts.push({ type: 'finish', usage: result.usage, finishReason: result.finishReason });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}
