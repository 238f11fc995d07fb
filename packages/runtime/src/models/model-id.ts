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
 * (`custom/openai.chat/gpt-4o`): only a model registered under that id, or `modelProviders` that serve
 * its provider's prefix, rebuild it.
 */
export function isCustomModelId(id: string): boolean {
  return id.startsWith(customModelPrefix);
}

/** A `custom/<provider id>/<model>` id split up. */
export interface ParsedCustomModelId {
  /** The AI SDK provider id the model showed (`openai.chat`). */
  providerId: string;
  /** The prefix `modelProviders` serve it under (`openai`). */
  prefix: string;
  /** The model name, colons and slashes kept (`llama3.1:8b`). */
  model: string;
}

/** The prefix an AI SDK provider id names: the part before its API suffix (`openai.chat` → `openai`). */
function prefixOfProviderId(providerId: string): string {
  return providerId.split('.')[0]!.toLowerCase();
}

/** Splits a `custom/<provider id>/<model>` id; `undefined` for any other id. */
export function parseCustomModelId(id: string): ParsedCustomModelId | undefined {
  if (!isCustomModelId(id)) return undefined;
  const rest = id.slice(customModelPrefix.length);
  // Provider ids hold no slash; model names may (`meta-llama/llama-3`).
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  const providerId = rest.slice(0, slash);
  return { providerId, prefix: prefixOfProviderId(providerId), model: rest.slice(slash + 1) };
}

/**
 * The prefix whose `modelProviders` serve a stored id: what comes before the first colon of
 * `provider:model`, the provider's prefix of a `custom/` id; `undefined` for a bare name.
 */
export function servedPrefixOf(id: string): string | undefined {
  if (isCustomModelId(id)) return parseCustomModelId(id)?.prefix;
  const separator = id.indexOf(':');
  return separator > 0 ? id.slice(0, separator).trim().toLowerCase() : undefined;
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

function warnCustomModel(model: LanguageModelV3, id: string, provider: string, providerId: string): void {
  if (warnedCustomModels.has(model)) return;
  warnedCustomModels.add(model);
  // The offline model has no address: what a rebuild would lose is only this object's own behaviour.
  const rebuiltAs =
    provider === OFFLINE_PROVIDER
      ? 'which a resume would rebuild as the plain offline model, not this object'
      : `which a resume would rebuild as a plain ${providerId} model (its default address, without this object's middleware)`;
  logger.warn(
    'models',
    `model "${model.modelId}" (${model.provider}) shows no base URL or settings crewline can read (a wrapLanguageModel(...) result or a model object of your own), so checkpoints store it as "${id}", not "${providerId}", ${rebuiltAs}. A resume or fork (the CLI's included) rebuilds it only from a model registered under that id (crewline.config.ts: models: { '${id}': yourModel }) or from modelProviders serving "${provider}" (their plain model). To store a name instead, register the model in crewline.config.ts's models, call registerProject(config) in this script and give the agent that very model: import the model from crewline.config.ts, or use llm: '<name>'. modelPrices under "${providerId}" do not price "${id}": list it under that id`,
  );
}

/**
 * The `provider:model` id to store for a model. A model registered under a name in `models` gets that
 * name; a model made by one of `modelProviders` gets that provider's prefix (so `createOpenAI({ name,
 * baseURL })` registered as `myproxy` is stored as `myproxy:…`), which is what restore looks up.
 * Otherwise the AI SDK provider id gives the prefix: it carries an API suffix (`openai.responses`,
 * `google.generative-ai`, `azure.chat`), and only the part before the first dot names the provider.
 * A model of a built-in prefix that shows no address (a `wrapLanguageModel(...)` result) gets
 * `custom/<provider id>/<model>` instead, which only a model registered under it (or `modelProviders`
 * serving its provider's prefix) rebuilds, and a warning (once per model object) says how to register it.
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
  const provider = prefixOfProviderId(model.provider);
  const providerId = `${provider}:${model.modelId}`;
  if (!rebuiltAsAnotherModel(model as LanguageModelV3, provider)) return providerId;
  const id = `${customModelPrefix}${model.provider}/${model.modelId}`;
  warnCustomModel(model as LanguageModelV3, id, provider, providerId);
  return id;
}
