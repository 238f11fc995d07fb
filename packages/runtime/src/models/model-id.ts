import { CrewlineError } from '@crewline/events';
import type { LanguageModel } from 'ai';

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
 * The `provider:model` id to store for a model. The AI SDK's provider ids carry an API suffix
 * (`openai.responses`, `anthropic.messages`, `ollama.chat`); only the part before the dot names the
 * provider. A model registered under a name in `models` gets that name, which is what restore looks up.
 */
export function modelIdOf(model: LanguageModel, models?: Record<string, unknown>): string {
  if (models !== undefined) {
    for (const [name, entry] of Object.entries(models)) if (entry === model) return name;
  }
  if (typeof model === 'string') return model;
  const provider = model.provider.split('.')[0]!.toLowerCase();
  return `${provider}:${model.modelId}`;
}
