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
 * True when the `provider:model` id of `model` would be rebuilt by a built-in prefix as another model
 * calling another address: the model shows no address (a `wrapLanguageModel(...)` result, a model
 * object of the user's own), so neither its base URL nor its middleware can be stored, and the
 * rebuild would call the provider's default address. Never for the offline model: a rebuild calls no
 * address and bills nothing, so a wrapped one keeps its `offline:` id (and is warned about).
 */
function rebuiltAsAnotherModel(model: LanguageModelV3, provider: string): boolean {
  if (provider === OFFLINE_PROVIDER) return false;
  return isBuiltInProvider(provider) && modelAddress(model) === undefined;
}

// Model objects warned about: once per model, however many agents and kickoffs use it.
const warnedCustomModels = new WeakSet<object>();

/** Warns once per model object; false when it was already warned about. */
function firstWarningFor(model: LanguageModelV3): boolean {
  if (warnedCustomModels.has(model)) return false;
  warnedCustomModels.add(model);
  return true;
}

// How to make checkpoints store a name for a model object, said by every warning below.
const storeAName =
  "To store a name instead, register the model in crewline.config.ts's models, call registerProject(config) in this script and give the agent that very model: import the model from crewline.config.ts, or use llm: '<name>'";

function warnCustomModel(model: LanguageModelV3, id: string, provider: string, providerId: string): void {
  if (!firstWarningFor(model)) return;
  logger.warn(
    'models',
    `model "${model.modelId}" (${model.provider}) shows no base URL or settings crewline can read (a wrapLanguageModel(...) result or a model object of your own), so checkpoints store it as "${id}", not "${providerId}", which a resume would rebuild as a plain ${providerId} model (its default address, without this object's middleware). A resume or fork (the CLI's included) rebuilds it only from a model registered under that id (crewline.config.ts: models: { '${id}': yourModel }) or from modelProviders serving "${provider}" (their plain model). ${storeAName}. modelPrices under "${providerId}" do not price "${id}": list it under that id`,
  );
}

// A wrapped offline model keeps its id: only its own behaviour (its middleware) is not rebuilt.
function warnWrappedOfflineModel(model: LanguageModelV3, id: string): void {
  if (!firstWarningFor(model)) return;
  logger.warn(
    'models',
    `model "${model.modelId}" (${model.provider}) is an offline model wrapped or copied without its brand (a wrapLanguageModel(...) result or a model object of your own), stored as "${id}": a resume or fork rebuilds it as the plain offline model, not this object (its middleware). ${storeAName}`,
  );
}

// A registered prefix matched a model that shows no address: any model object of that provider id
// and model name showing none matches the same way, so the id may name a model the user did not use.
// Ids warned about by warnMatchedWithoutAddress: a registry makes a new model object on every
// languageModel() call, so a crew built per job (a worker, a factory) would warn on every job.
const idsMatchedWithoutAddress = new Set<string>();

function warnMatchedWithoutAddress(model: LanguageModelV3, id: string, prefix: string): void {
  const key = `${model.provider}|${id}`;
  if (idsMatchedWithoutAddress.has(key) || !firstWarningFor(model)) return;
  idsMatchedWithoutAddress.add(key);
  logger.warn(
    'models',
    `model "${model.modelId}" (${model.provider}) shows no base URL crewline can read, nor does the model the registered modelProviders make for "${id}" (a registry's languageModelMiddleware, or a wrapper they hold, hides it), so checkpoints store it as "${id}" and a resume or fork rebuilds it through those modelProviders. If it was taken from them, give the agent llm: '${id}' instead of the object (no warning). If it is a model object of your own (a wrapLanguageModel(...) result), the rebuild would call their "${prefix}" provider instead: ${storeAName.charAt(0).toLowerCase()}${storeAName.slice(1)}`,
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
 * serving its provider's prefix) rebuilds, and a warning (once per model object) says how to register it;
 * a wrapped offline model keeps `offline:<name>` (a rebuild calls nothing elsewhere), warned the same way.
 * A registered prefix matched by a model that shows no address is warned about once too: a wrapped model
 * of the user's own matches it just as the registry's model does.
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
  const provider = prefixOfProviderId(model.provider);
  if (modelProviders !== undefined) {
    const list: readonly ModelProviders[] = Array.isArray(modelProviders)
      ? modelProviders
      : [modelProviders as ModelProviders];
    const registered = registeredPrefixOf(model as LanguageModelV3, list, modelAddress);
    if (registered !== undefined) {
      const id = `${registered.prefix}:${model.modelId}`;
      // Only where it matters: without the match the model would get a custom/ id.
      if (registered.withoutAddress && rebuiltAsAnotherModel(model as LanguageModelV3, provider))
        warnMatchedWithoutAddress(model as LanguageModelV3, id, registered.prefix);
      return id;
    }
  }
  const providerId = `${provider}:${model.modelId}`;
  if (provider === OFFLINE_PROVIDER && !isOfflineModel(model as LanguageModelV3))
    warnWrappedOfflineModel(model as LanguageModelV3, providerId);
  if (!rebuiltAsAnotherModel(model as LanguageModelV3, provider)) return providerId;
  const id = `${customModelPrefix}${model.provider}/${model.modelId}`;
  warnCustomModel(model as LanguageModelV3, id, provider, providerId);
  return id;
}
