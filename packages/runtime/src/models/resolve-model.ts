import { CrewlineError, keepNamesFromValueRedaction } from '@crewline/events';
import { type LanguageModel, NoSuchModelError } from 'ai';
import { isBuiltInProvider, openAICompatibleServers } from './built-in-prefixes.js';
import { builtInModel, MissingApiKeyError, type PackageLoader } from './built-in-providers.js';
import { registerModelCredentials } from './model-credentials.js';
import { isCustomModelId, type LanguageModelObject, parseCustomModelId, parseModelId } from './model-id.js';
import {
  type ModelApi,
  type ModelProviders,
  modelFromProviders,
  providerPrefixes,
} from './model-providers.js';
import { offlineModel } from './offline/offline-model.js';
import type { StoredModelSettings } from './stored-model.js';

export { MissingApiKeyError, openAICompatibleServers };

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
   * AI SDK providers by prefix (`{ google: createGoogleGenerativeAI() }`) or a
   * `createProviderRegistry(...)`, or several of them (later ones win): any `prefix:model` whose prefix
   * they serve is built by them, before the built-in prefixes. Default: none.
   */
  modelProviders?: ModelProviders | readonly ModelProviders[];
  /**
   * Settings a checkpoint stored for the model (its base URL...); used by the built-in prefixes, and
   * its OpenAI API (`chat`) by `modelProviders` given by prefix that have a method of that name.
   * Default: none.
   */
  settings?: StoredModelSettings;
  /**
   * Where credentials and base URLs are read from. Default `process.env`. With the default, keys are
   * only checked here and the provider package reads them again at request time, so crewline never
   * holds a key; with a custom map the key is handed to the provider package.
   */
  env?: Record<string, string | undefined>;
  /** A `fetch` for the provider packages (tests, proxies). Default: the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /**
   * How the built-in prefixes load their AI SDK package (`@ai-sdk/openai`...). Default: `require` from
   * where @crewline/runtime is installed.
   */
  loadPackage?: PackageLoader;
}

/** Every provider prefix {@link resolveModel} knows without a registration. */
export const builtInModelProviders = [
  'openai',
  'anthropic',
  'offline',
  ...Object.keys(openAICompatibleServers),
] as const;

function providerList(options: ResolveModelOptions): readonly ModelProviders[] {
  const given = options.modelProviders;
  if (given === undefined) return [];
  return Array.isArray(given) ? given : [given as ModelProviders];
}

/** The OpenAI API an AI SDK provider id names (`openai.chat` → `chat`), if it names one. */
function apiOf(providerId: string): ModelApi | undefined {
  const api = providerId.split('.')[1];
  return api === 'chat' || api === 'completion' ? api : undefined;
}

/**
 * Turns a `provider:model` id into an AI SDK model: a model registered under the exact id first, then
 * the `modelProviders` that serve the prefix, then the built-in prefixes `openai:`, `anthropic:`,
 * `openai-compatible:`, `ollama:`, `lmstudio:`, `vllm:` (their AI SDK package loaded on first use) and
 * `offline:`. A `custom/<provider id>/<model>` id (a model object modelIdOf could not describe)
 * is built by a model registered under it or by the `modelProviders` serving its provider's prefix,
 * never by a built-in prefix. Checks the credentials now so a missing key fails before the run starts,
 * with the variable to set.
 */
export function resolveModel(id: string, options: ResolveModelOptions = {}): LanguageModelObject {
  const registered = options.models?.[id];
  if (registered !== undefined)
    return asModelObject(typeof registered === 'function' ? registered() : registered, id, options);
  const providers = providerList(options);
  if (isCustomModelId(id)) {
    const custom = parseCustomModelId(id);
    // modelProviders the restoring process registers for the prefix rebuild it, as they rebuild any
    // `prefix:model` of theirs; a built-in prefix never does (it would be a plain model at its default
    // address, not the object the checkpoint was written with).
    let notMade = false;
    try {
      const fromProviders =
        custom &&
        modelFromProviders(
          providers,
          custom.prefix,
          custom.model,
          options.settings?.api ?? apiOf(custom.providerId),
        );
      if (fromProviders) return asModelObject(fromProviders, id, options);
    } catch (error) {
      // They serve the prefix but not this model (a customProvider without it): as unregistered.
      if (!NoSuchModelError.isInstance(error)) throw error;
      notMade = true;
    }
    throw new CrewlineError(
      'models',
      'not_rebuildable',
      `model "${id}" was a model object checkpoints cannot describe (a wrapLanguageModel(...) result or a model object of your own: no base URL or settings to read), and only a model registered under that id rebuilds it${custom ? ` (or modelProviders serving "${custom.prefix}": their plain model, without the object's middleware${notMade ? `; those registered serve "${custom.prefix}" but do not make "${custom.model}"` : ''})` : ''}. Register it in crewline.config.ts: export default defineConfig({ models: { '${id}': yourModel } }); in code, pass the same models. So that later runs store a name instead, register the model in the config's models, call registerProject(config) in the crew's script and give the agent that very model (import it from the config) or its name (llm: '<name>')`,
      { details: { modelId: id } },
    );
  }
  const { provider, model } = parseModelId(id);
  const fromProviders = modelFromProviders(providers, provider, model, options.settings?.api);
  if (fromProviders !== undefined) return asModelObject(fromProviders, id, options);
  if (provider === 'offline') return offlineModel({ name: model });
  if (isBuiltInProvider(provider)) {
    const env = options.env ?? process.env;
    return builtInModel({
      id,
      provider,
      model,
      env,
      fromProcess: options.env === undefined || options.env === process.env,
      settings: options.settings,
      fetch: options.fetch,
      loadPackage: options.loadPackage,
    });
  }
  const registeredPrefixes = providerPrefixes(providers);
  throw new CrewlineError(
    'models',
    'not_rebuildable',
    `no model provider "${provider}" for model id "${id}"; built in: ${builtInModelProviders.join(', ')}${
      registeredPrefixes.length > 0 ? `; registered: ${registeredPrefixes.join(', ')}` : ''
    }. Register this model in crewline.config.ts: export default defineConfig({ models: { '${id}': yourModel } }), or its AI SDK provider for every "${provider}:" model: defineConfig({ modelProviders: { '${provider}': create…({...}) } }); in code, pass the same models or modelProviders`,
    { details: { modelId: id, provider } },
  );
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
  // The id is what a checkpoint stores: a key it holds (a provider named like its key) must not
  // rewrite it, or the checkpoint names a model nothing serves.
  keepNamesFromValueRedaction([id]);
  // A registered model or provider may hold a key given in code or in the config: no variable shows it.
  registerModelCredentials(model);
  return model;
}
