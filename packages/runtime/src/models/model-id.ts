import type { LanguageModelV3 } from '@ai-sdk/provider';
import { CrewlineError, logger } from '@crewline/events';
import type { LanguageModel } from 'ai';
import { isBuiltInProvider } from './built-in-prefixes.js';
import { type ModelProviders, registeredPrefixOf } from './model-providers.js';
import { isOfflineModel, OFFLINE_PROVIDER } from './offline/offline-model.js';
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

/** What starts the id {@link modelIdOf} gives a model object it cannot describe. */
const customModelPrefix = 'custom/';

/**
 * True for an id {@link modelIdOf} gave a model object that a checkpoint cannot describe
 * (`custom/openai.chat/gpt-4o`): only a model registered under that id rebuilds it.
 */
export function isCustomModelId(id: string): boolean {
  return id.startsWith(customModelPrefix);
}

/**
 * True when the `provider:model` id of `model` would be rebuilt by a built-in prefix as another model:
 * the model shows no address (a `wrapLanguageModel(...)` result, a model object of the user's own), so
 * neither its base URL nor its middleware can be stored, and the rebuild would call the provider's
 * default address. The offline model has nothing more to store; a copy of it keeps its brand.
 */
function rebuiltAsAnotherModel(model: LanguageModelV3, provider: string): boolean {
  if (provider === OFFLINE_PROVIDER) return !isOfflineModel(model);
  return isBuiltInProvider(provider) && modelAddress(model) === undefined;
}

// Model objects warned about: once per model, however many agents and kickoffs use it.
const warnedCustomModels = new WeakSet<object>();

function warnCustomModel(model: LanguageModelV3, id: string, providerId: string): void {
  if (warnedCustomModels.has(model)) return;
  warnedCustomModels.add(model);
  logger.warn(
    'models',
    `model "${model.modelId}" (${model.provider}) shows no base URL or settings crewline can read (a wrapLanguageModel(...) result or a model object of your own), so checkpoints store it as "${id}", not "${providerId}", which would rebuild a plain ${providerId} model (its default address, no middleware). A resume or fork (the CLI's included) needs it registered: call registerProject(config) with your crewline.config.ts in this script, so that checkpoints store the name its models give it, or register it there as models: { '${id}': yourModel }`,
  );
}

/**
 * The `provider:model` id to store for a model. A model registered under a name in `models` gets that
 * name; a model made by one of `modelProviders` gets that provider's prefix (so `createOpenAI({ name,
 * baseURL })` registered as `myproxy` is stored as `myproxy:…`), which is what restore looks up.
 * Otherwise the AI SDK provider id gives the prefix: it carries an API suffix (`openai.responses`,
 * `google.generative-ai`, `azure.chat`), and only the part before the first dot names the provider.
 * A model of a built-in prefix that shows no address (a `wrapLanguageModel(...)` result) gets
 * `custom/<provider id>/<model>` instead, which only a model registered under it rebuilds, and a
 * warning (once per model object) says how to register it.
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
  const providerId = `${provider}:${model.modelId}`;
  if (!rebuiltAsAnotherModel(model as LanguageModelV3, provider)) return providerId;
  const id = `${customModelPrefix}${model.provider}/${model.modelId}`;
  warnCustomModel(model as LanguageModelV3, id, providerId);
  return id;
}
