import type { LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { isControlMessage } from '../../agent-loop/control-messages.js';

/** The text of one prompt message, tool calls and tool results included, as the offline model reads it. */
export function messageText(message: LanguageModelV3Message): string {
  if (message.role === 'system') return message.content;
  const pieces: string[] = [];
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        pieces.push(part.text);
        break;
      case 'tool-call':
        pieces.push(`${part.toolName}(${stableJson(part.input)})`);
        break;
      case 'tool-result':
        pieces.push(`${part.toolName} -> ${toolOutputText(part.output)}`);
        break;
      default:
        break;
    }
  }
  return pieces.join('\n');
}

/** The value a tool result carries, as text. */
export function toolOutputText(output: { type: string; value?: unknown; reason?: string }): string {
  if (output.type === 'text' || output.type === 'error-text') return String(output.value);
  if (output.type === 'execution-denied') return `denied${output.reason ? `: ${output.reason}` : ''}`;
  return stableJson(output.value);
}

/**
 * Every system message of a prompt, concatenated as is: a prompt split into cache blocks
 * (`systemPromptFor(..., { splitAt })`) reads as the original text.
 */
export function systemText(prompt: LanguageModelV3Prompt): string | undefined {
  const parts = prompt.filter((message) => message.role === 'system').map((message) => message.content);
  return parts.length === 0 ? undefined : parts.join('');
}

/**
 * The text of the last user message: the request the model is answering. Instructions the agent loop
 * adds (asking for a final answer, or for valid JSON) are skipped, so the answer stays about the task.
 */
export function lastUserText(prompt: LanguageModelV3Prompt): string {
  let fallback: string | undefined;
  for (let index = prompt.length - 1; index >= 0; index -= 1) {
    const message = prompt[index]!;
    if (message.role !== 'user') continue;
    const text = messageText(message);
    if (!isControlMessage(text)) return text;
    fallback ??= text;
  }
  return fallback ?? '';
}

/** JSON with sorted object keys, so that equal values always give equal text (and equal hashes). */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  if (value instanceof URL) return value.href;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) result[key] = sortKeys(item);
  }
  return result;
}

/** A rough token count (four characters a token), the same rule for prompts and answers. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
