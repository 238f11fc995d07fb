import type { LanguageModelV3 } from '@ai-sdk/provider';

/** What crewline reads of the configuration an AI SDK provider package keeps on its model objects. */
export interface ProviderConfig {
  baseURL?: unknown;
  url?: unknown;
  fetch?: unknown;
  headers?: unknown;
}

/** The provider configuration of a model object, when it has one. */
export function configOf(model: LanguageModelV3): ProviderConfig | undefined {
  const config = (model as { config?: unknown }).config;
  return config !== null && typeof config === 'object' ? (config as ProviderConfig) : undefined;
}

/**
 * The base URL a model sends its requests to, as its provider package built it (`config.baseURL`,
 * or `config.url` asked for the empty path); `undefined` when the model does not show it.
 */
export function modelAddress(model: LanguageModelV3): string | undefined {
  const config = configOf(model);
  if (!config) return undefined;
  if (typeof config.baseURL === 'string') return config.baseURL;
  if (typeof config.url !== 'function') return undefined;
  try {
    const url = (config.url as (options: { path: string; modelId: string }) => unknown)({
      path: '',
      modelId: model.modelId,
    });
    return typeof url === 'string' ? url : undefined;
  } catch {
    return undefined;
  }
}
