import type { SystemModelMessage } from 'ai';
import { type ModelInput, parseModelId } from '../models/model-id.js';

/** A system prompt in any form the AI SDK accepts. */
export type SystemPrompt = string | SystemModelMessage | SystemModelMessage[];

const anthropicCacheMark = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

function providerOf(model: ModelInput): string {
  if (typeof model !== 'string') return model.provider;
  return model.includes(':') ? parseModelId(model).provider : model;
}

/** True for Anthropic models (provider id `anthropic…`), the ones that cache only where the prompt is marked. */
export function isAnthropicModel(model: ModelInput): boolean {
  return providerOf(model).toLowerCase().startsWith('anthropic');
}

export interface SystemPromptOptions {
  /**
   * Split the prompt into two cache blocks at this character index (usually the length of a prefix
   * shared by several agents, from `sharedPrefixLength`), so that the shared part is cached once for
   * all of them. Ignored when it is not strictly inside the text. Default: one block.
   */
  splitAt?: number;
}

/**
 * The system prompt to send to `model`, for cache preload probes and real calls alike (they must be
 * byte-identical for the cache to hit). Anthropic models get system messages marked with
 * `cacheControl: { type: 'ephemeral' }`; other providers cache prefixes on their own and get the text.
 */
export function systemPromptFor(
  model: ModelInput,
  text: string,
  options: SystemPromptOptions = {},
): SystemPrompt {
  if (!isAnthropicModel(model)) return text;
  const { splitAt } = options;
  if (splitAt !== undefined && splitAt > 0 && splitAt < text.length) {
    return [
      { role: 'system', content: text.slice(0, splitAt), providerOptions: anthropicCacheMark },
      { role: 'system', content: text.slice(splitAt), providerOptions: anthropicCacheMark },
    ];
  }
  return { role: 'system', content: text, providerOptions: anthropicCacheMark };
}

/** The plain text of a system prompt in any form. */
export function systemPromptText(system: SystemPrompt): string {
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((message) => message.content).join('');
  return system.content;
}
