import type { LanguageModelV3 } from '@ai-sdk/provider';
import { CrewlineError } from '@crewline/events';
import type { LanguageModel } from 'ai';
import { type ModelProviders, registeredPrefixOf } from './model-providers.js';
import { modelAddress } from './provider-config.js';

/** A model object: an AI SDK 6 (specification v3) language model. */
export type LanguageModelObject = LanguageModelV3;

/**
 * A model as crewline accepts it: an object, or a `provider:model` id. (The AI SDK's own
 * `LanguageModel` type also accepts gateway ids as a very large string union, which makes object
 * spreads too complex for the compiler; plain `string` keeps types simple.)
 */
export type ModelInput = LanguageModelObject | string;

/** A `provider:model` id split in two. */
export interface ParsedModelId {
  provider: string;
  model: string;
}

/** Splits `provider:model` at the first colon (model names may contain colons, e.g. `ollama:llama3:8b`). */
export function parseModelId(id: string): ParsedModelId {
  const separator = id.indexOf(':');
  if (separator <= 0 || separator === id.length - 1) {
    throw new CrewlineError(
      'models',
      'invalid_argument',
      `model id "${id}" is not of the form "provider:model"; use for example "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5" or "offline:default"`,
    );
  }
  return { provider: id.slice(0, separator).trim().toLowerCase(), model: id.slice(separator + 1).trim() };
}

/**
 * The `provider:model` id to store for a model. A model registered under a name in `models` gets that
 * name; a model made by one of `modelProviders` gets that provider's prefix (so `createOpenAI({ name,
 * baseURL })` registered as `myproxy` is stored as `myproxy:…`), which is what restore looks up.
 * Otherwise the AI SDK provider id gives the prefix: it carries an API suffix (`openai.responses`,
 * `google.generative-ai`, `azure.chat`), and only the part before the first dot names the provider.
 */
export function modelIdOf(
  model: LanguageModel,
  models?: Record<string, unknown>,
  modelProviders?: ModelProviders | readonly ModelProviders[],
): string {
  if (models !== undefined) {
    for (const [name, entry] of Object.entries(models)) if (entry === model) return name;
  }
  if (typeof model === 'string') return model;
  if (modelProviders !== undefined) {
    const list: readonly ModelProviders[] = Array.isArray(modelProviders)
      ? modelProviders
      : [modelProviders as ModelProviders];
    const prefix = registeredPrefixOf(model as LanguageModelV3, list, modelAddress);
    if (prefix !== undefined) return `${prefix}:${model.modelId}`;
  }
  const provider = model.provider.split('.')[0]!.toLowerCase();
  return `${provider}:${model.modelId}`;
}
