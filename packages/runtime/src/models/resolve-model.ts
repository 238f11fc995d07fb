import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { CrewlineError, type CrewlineErrorOptions, registerEnvironmentSecrets } from '@crewline/events';
import type { LanguageModel } from 'ai';
import { type LanguageModelObject, parseModelId } from './model-id.js';
import { offlineModel } from './offline/offline-model.js';

/**
 * A model registered by name: the model itself (an object or another id), or a factory called on each
 * resolve. Typed as the AI SDK's `LanguageModel` so a project config can register anything it has;
 * objects must implement specification v3 (AI SDK 6 provider packages).
 */
export type RegisteredModel = LanguageModel | (() => LanguageModel);

/** Models registered by id (usually from `crewline.config.ts`); they win over built-in providers. */
export type ModelRegistry = Record<string, RegisteredModel>;

export interface ResolveModelOptions {
  /** Registered models, looked up first by the exact id. Default: none. */
  models?: ModelRegistry;
  /**
   * Where credentials and base URLs are read from. Default `process.env`. With the default, keys are
   * only checked here and the provider package reads them again at request time, so crewline never
   * holds a key; with a custom map the key is handed to the provider package.
   */
  env?: Record<string, string | undefined>;
  /** A `fetch` for the provider packages (tests, proxies). Default: the global `fetch`. */
  fetch?: typeof globalThis.fetch;
}

/** Thrown when a provider's key is not set: names the environment variable to set. */
export class MissingApiKeyError extends CrewlineError {
  readonly envVar: string;
  readonly provider: string;

  constructor(provider: string, envVar: string, modelId: string, options: CrewlineErrorOptions = {}) {
    super(
      'models',
      'invalid_config',
      `model "${modelId}" needs an API key: set the ${envVar} environment variable (crewline never stores keys, so it is read from the environment each run)`,
      { ...options, details: { provider, envVar, modelId } },
    );
    this.name = 'MissingApiKeyError';
    this.envVar = envVar;
    this.provider = provider;
  }
}

interface CompatibleServer {
  urlVariable: string;
  defaultURL: string | undefined;
  keyVariable: string;
}

/** OpenAI-compatible servers: where their base URL and (optional) key come from. */
export const openAICompatibleServers: Record<string, CompatibleServer> = {
  'openai-compatible': {
    urlVariable: 'OPENAI_COMPATIBLE_BASE_URL',
    defaultURL: undefined,
    keyVariable: 'OPENAI_COMPATIBLE_API_KEY',
  },
  ollama: {
    urlVariable: 'OLLAMA_BASE_URL',
    defaultURL: 'http://localhost:11434/v1',
    keyVariable: 'OLLAMA_API_KEY',
  },
  lmstudio: {
    urlVariable: 'LMSTUDIO_BASE_URL',
    defaultURL: 'http://localhost:1234/v1',
    keyVariable: 'LMSTUDIO_API_KEY',
  },
  vllm: { urlVariable: 'VLLM_BASE_URL', defaultURL: 'http://localhost:8000/v1', keyVariable: 'VLLM_API_KEY' },
};

/** Every provider prefix {@link resolveModel} knows without a registration. */
export const builtInModelProviders = [
  'openai',
  'anthropic',
  'offline',
  ...Object.keys(openAICompatibleServers),
] as const;

/**
 * Registers the credentials among the variables a provider is built from (its key, and the password
 * of a base URL that has one) for redaction by value: a server may quote them back in an error, and
 * a key set in `process.env` after crewline first read it, or given in a custom `env`, is not yet
 * known there.
 */
function registerCredentials(env: Record<string, string | undefined>, ...names: string[]): void {
  registerEnvironmentSecrets(Object.fromEntries(names.map((name) => [name, env[name]])));
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim().length > 0;
}

/**
 * Turns a `provider:model` id into an AI SDK model: a registered model first, then `openai:`,
 * `anthropic:`, `openai-compatible:`, `ollama:`, `lmstudio:`, `vllm:` and `offline:`. Checks the
 * credentials now so a missing key fails before the run starts, with the variable to set.
 */
export function resolveModel(id: string, options: ResolveModelOptions = {}): LanguageModelObject {
  const registered = options.models?.[id];
  if (registered !== undefined)
    return asModelObject(typeof registered === 'function' ? registered() : registered, id, options);
  const { provider, model } = parseModelId(id);
  const env = options.env ?? process.env;
  const fromProcess = options.env === undefined || options.env === process.env;
  switch (provider) {
    case 'offline':
      return offlineModel({ name: model });
    case 'openai': {
      if (!present(env.OPENAI_API_KEY)) throw new MissingApiKeyError(provider, 'OPENAI_API_KEY', id);
      registerCredentials(env, 'OPENAI_API_KEY', 'OPENAI_BASE_URL');
      const openai = createOpenAI({
        ...(fromProcess ? {} : { apiKey: env.OPENAI_API_KEY }),
        ...(present(env.OPENAI_BASE_URL) ? { baseURL: env.OPENAI_BASE_URL } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      return openai(model);
    }
    case 'anthropic': {
      if (!present(env.ANTHROPIC_API_KEY)) throw new MissingApiKeyError(provider, 'ANTHROPIC_API_KEY', id);
      registerCredentials(env, 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL');
      const anthropic = createAnthropic({
        ...(fromProcess ? {} : { apiKey: env.ANTHROPIC_API_KEY }),
        ...(present(env.ANTHROPIC_BASE_URL) ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      return anthropic(model);
    }
    default: {
      const server = openAICompatibleServers[provider];
      if (server === undefined) {
        throw new CrewlineError(
          'models',
          'not_rebuildable',
          `no model provider "${provider}" for model id "${id}"; use one of ${builtInModelProviders.join(', ')}, or register the model in crewline.config.ts: export default defineConfig({ models: { '${id}': yourModel } })`,
          { details: { modelId: id, provider } },
        );
      }
      const baseURL =
        env[server.urlVariable] ??
        (provider === 'openai-compatible' ? undefined : env.OPENAI_COMPATIBLE_BASE_URL) ??
        server.defaultURL;
      if (!present(baseURL)) {
        throw new CrewlineError(
          'models',
          'invalid_config',
          `model "${id}" needs a server address: set ${server.urlVariable} to the server's OpenAI-compatible base URL (for example http://localhost:8000/v1)`,
          { details: { modelId: id, envVar: server.urlVariable } },
        );
      }
      const apiKey = env[server.keyVariable];
      registerCredentials(env, server.keyVariable, server.urlVariable, 'OPENAI_COMPATIBLE_BASE_URL');
      // The compatible package does not read keys from the environment itself, so it is handed over.
      const compatible = createOpenAICompatible({
        name: provider,
        baseURL,
        ...(present(apiKey) ? { apiKey } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      return compatible.chatModel(model);
    }
  }
}

function asModelObject(model: LanguageModel, id: string, options: ResolveModelOptions): LanguageModelObject {
  if (typeof model === 'string') {
    if (model === id) {
      throw new CrewlineError(
        'models',
        'invalid_config',
        `model "${id}" is registered as its own id; register a model object or another id`,
      );
    }
    return resolveModel(model, { ...options, models: undefined });
  }
  if (model.specificationVersion !== 'v3') {
    throw new CrewlineError(
      'models',
      'invalid_config',
      `model "${id}" implements language model specification ${model.specificationVersion}; crewline needs a v3 model (AI SDK 6 provider packages)`,
    );
  }
  return model;
}
