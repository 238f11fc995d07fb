import type { LanguageModelV3, ProviderV3 } from '@ai-sdk/provider';
import { CrewlineError } from '@crewline/events';
import { NoSuchProviderError } from 'ai';

/** AI SDK providers by the prefix of the `prefix:model` ids they serve: `{ google: createGoogleGenerativeAI() }`. */
export type ModelProviderMap = Record<string, ProviderV3>;

/**
 * An AI SDK provider registry (`createProviderRegistry({...})` from `ai`), or anything else that
 * turns a `prefix:model` id into a language model.
 */
export interface ModelProviderRegistry {
  languageModel(id: string): LanguageModelV3;
}

/** Where `prefix:model` ids find their AI SDK provider: providers by prefix, or a provider registry. */
export type ModelProviders = ModelProviderMap | ModelProviderRegistry;

function isRegistry(value: ModelProviders): value is ModelProviderRegistry {
  return typeof (value as { languageModel?: unknown }).languageModel === 'function';
}

/**
 * Checks what a config or an option gives as `modelProviders`. A single provider (rather than a map of
 * them) is refused, because nothing would say which prefix it serves.
 */
export function validateModelProviders(value: unknown, where: string): ModelProviders {
  if (value === null || typeof value !== 'object') {
    throw new CrewlineError(
      'models',
      'invalid_config',
      `${where} must be an object of AI SDK providers by prefix ({ google: createGoogleGenerativeAI() }) or createProviderRegistry({...})`,
    );
  }
  const candidate = value as ModelProviders;
  if (isRegistry(candidate)) {
    if ((candidate as { specificationVersion?: unknown }).specificationVersion !== undefined) {
      throw new CrewlineError(
        'models',
        'invalid_config',
        `${where} is a single AI SDK provider; name the prefix it serves: { myprefix: provider }`,
      );
    }
    return candidate;
  }
  for (const [prefix, provider] of Object.entries(candidate)) {
    if (typeof (provider as { languageModel?: unknown } | null)?.languageModel !== 'function') {
      throw new CrewlineError(
        'models',
        'invalid_config',
        `${where}.${prefix} is not an AI SDK provider (it has no languageModel function); pass for example createOpenAI({ baseURL })`,
      );
    }
    if (prefix.includes(':') || prefix !== prefix.trim().toLowerCase()) {
      throw new CrewlineError(
        'models',
        'invalid_config',
        `${where}: prefix "${prefix}" must be lower case without ':' (ids are "prefix:model"); rename it`,
      );
    }
  }
  return candidate;
}

/** The providers a registry holds (`createProviderRegistry` keeps them in `providers`), if it shows them. */
function registryEntries(registry: ModelProviderRegistry): ModelProviderMap {
  const providers = (registry as { providers?: unknown }).providers;
  return providers !== null && typeof providers === 'object' ? (providers as ModelProviderMap) : {};
}

/** Every provider of a map, or of a registry as far as it shows them. */
export function providerEntries(value: ModelProviders): ProviderV3[] {
  return Object.values(isRegistry(value) ? registryEntries(value) : value).filter(
    (provider): provider is ProviderV3 =>
      typeof (provider as { languageModel?: unknown } | null)?.languageModel === 'function',
  );
}

function separatorOf(registry: ModelProviderRegistry): string {
  const separator = (registry as { separator?: unknown }).separator;
  return typeof separator === 'string' && separator.length > 0 ? separator : ':';
}

/** The OpenAI APIs a checkpoint names (`llmSettings.api`) when a model does not use the provider's default. */
export type ModelApi = 'chat' | 'completion';

/**
 * The model of `provider` for `model`, through the API a checkpoint stored when the provider has a
 * method of that name (`createOpenAI(...).chat`): its `languageModel` would build the Responses API
 * model, which a chat-only gateway does not serve.
 */
function modelOfProvider(provider: ProviderV3, model: string, api: ModelApi | undefined): LanguageModelV3 {
  const build = api === undefined ? undefined : (provider as unknown as Record<string, unknown>)[api];
  if (typeof build === 'function') return (build as (model: string) => LanguageModelV3).call(provider, model);
  return provider.languageModel(model);
}

/**
 * The model `prefix:model` names in the first of `providers` (searched last to first: later ones win)
 * that serves `prefix`; `undefined` when none does. A provider given by prefix builds it through `api`
 * when it has that method; a registry builds its own model (its `languageModel` is all it shows).
 * A provider that serves the prefix but not the model throws the AI SDK's `NoSuchModelError`.
 */
export function modelFromProviders(
  providers: readonly ModelProviders[],
  prefix: string,
  model: string,
  api?: ModelApi,
): LanguageModelV3 | undefined {
  for (let index = providers.length - 1; index >= 0; index -= 1) {
    const entry = providers[index]!;
    if (isRegistry(entry)) {
      try {
        return entry.languageModel(`${prefix}${separatorOf(entry)}${model}`);
      } catch (error) {
        if (NoSuchProviderError.isInstance(error)) continue;
        throw error;
      }
    }
    const provider = Object.hasOwn(entry, prefix) ? entry[prefix] : undefined;
    if (provider) return modelOfProvider(provider, model, api);
  }
  return undefined;
}

/** Every prefix the providers serve, as far as they show them (for messages). */
export function providerPrefixes(providers: readonly ModelProviders[]): string[] {
  const prefixes = new Set<string>();
  for (const entry of providers)
    for (const prefix of Object.keys(isRegistry(entry) ? registryEntries(entry) : entry))
      prefixes.add(prefix);
  return [...prefixes];
}

/**
 * The models a prefix of `entry` makes for `modelId`, to compare with a model object: the model of the
 * provider it holds (a model the user took from that provider directly) and, when `throughRegistry`,
 * the model the registry's `languageModel` builds (what a restore builds: with the registry's
 * `languageModelMiddleware`); none when the provider refuses the model name.
 */
function twinsOf(
  entry: ModelProviders,
  prefix: string,
  provider: ProviderV3,
  modelId: string,
  throughRegistry: boolean,
): LanguageModelV3[] {
  const builders = [() => provider.languageModel(modelId)];
  if (throughRegistry && isRegistry(entry))
    builders.push(() => entry.languageModel(`${prefix}${separatorOf(entry)}${modelId}`));
  const twins: LanguageModelV3[] = [];
  for (const build of builders) {
    try {
      const twin = build();
      if (twin) twins.push(twin);
    } catch {
      // This prefix does not make that model: not the one that made it.
    }
  }
  return twins;
}

/** The registered prefix {@link registeredPrefixOf} found for a model object. */
export interface RegisteredPrefix {
  prefix: string;
  /**
   * True when the model shows no address, so the match rests on its provider id and model name alone:
   * any model object of that provider id and name that shows none (a `wrapLanguageModel(...)` of the
   * user's own) matches the same way.
   */
  withoutAddress: boolean;
}

/**
 * The registered prefix whose provider makes models like `model` (the same AI SDK provider id and
 * the same address), so that `createOpenAI({ baseURL, name })` registered as `myproxy` is stored as
 * `myproxy:…`, and a model of a registry with `languageModelMiddleware` (which shows no address, as
 * the registry's own models do not) under the registry's prefix. `undefined` when no registered
 * provider made it.
 *
 * The registry's own model is compared only under the prefix the model's provider id names (`openai`
 * for `openai.chat`): it shows no address, so under any other prefix (`team`) it would match every
 * model object of that provider id and name that shows none, and a user's own
 * `wrapLanguageModel(openai('gpt-4o'))` would be stored as `team:gpt-4o` and resumed through the
 * team's gateway. Under its own prefix that ambiguity cannot be decided; the caller warns of it.
 */
export function registeredPrefixOf(
  model: LanguageModelV3,
  providers: readonly ModelProviders[],
  addressOf: (model: LanguageModelV3) => string | undefined,
): RegisteredPrefix | undefined {
  const address = addressOf(model);
  const natural = model.provider.split('.')[0]!.toLowerCase();
  for (let index = providers.length - 1; index >= 0; index -= 1) {
    const entry = providers[index]!;
    const candidates = Object.entries(isRegistry(entry) ? registryEntries(entry) : entry);
    // The prefix the provider id itself suggests is tried first: `google` for `google.generative-ai`.
    candidates.sort(([left], [right]) => Number(right === natural) - Number(left === natural));
    for (const [prefix, provider] of candidates) {
      const twins = twinsOf(entry, prefix, provider, model.modelId, prefix === natural);
      if (twins.some((twin) => twin.provider === model.provider && addressOf(twin) === address))
        return { prefix, withoutAddress: address === undefined };
    }
  }
  return undefined;
}

/** True when `providers` serve the prefix (without building a model where they show their prefixes). */
export function servesPrefix(providers: ModelProviders, prefix: string): boolean {
  if (!isRegistry(providers)) return Object.hasOwn(providers, prefix);
  if (Object.hasOwn(registryEntries(providers), prefix)) return true;
  try {
    providers.languageModel(`${prefix}${separatorOf(providers)}probe`);
    return true;
  } catch (error) {
    // Any other refusal (no such *model*) still means the prefix has a provider.
    return !NoSuchProviderError.isInstance(error);
  }
}
