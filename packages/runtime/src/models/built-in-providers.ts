import { createRequire } from 'node:module';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { CrewlineError, type CrewlineErrorOptions, registerEnvironmentSecrets } from '@crewline/events';
import { installCommand } from '@crewline/runtime-state/internal';
import { openAICompatibleServers } from './built-in-prefixes.js';
import type { StoredModelSettings } from './stored-model.js';

/** Loads a package by name, synchronously (the runtime's `require`; tests pass another one). */
export type PackageLoader = (packageName: string) => unknown;

const requireFromRuntime = createRequire(import.meta.url);
const defaultLoader: PackageLoader = (packageName) => requireFromRuntime(packageName);

/** The AI SDK package each built-in prefix loads on first use (optional peers of @crewline/runtime). */
export const modelProviderPackages = {
  openai: '@ai-sdk/openai',
  anthropic: '@ai-sdk/anthropic',
  'openai-compatible': '@ai-sdk/openai-compatible',
} as const;

/** What a built-in provider is built from. */
export interface BuiltInModelRequest {
  id: string;
  provider: string;
  model: string;
  env: Record<string, string | undefined>;
  /** The environment is `process.env`: the provider package reads keys there itself at request time. */
  fromProcess: boolean;
  settings: StoredModelSettings | undefined;
  fetch: typeof globalThis.fetch | undefined;
  loadPackage: PackageLoader | undefined;
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

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim().length > 0;
}

/**
 * Registers the credentials among the variables a provider is built from (its key, and the password
 * of a base URL that has one) for redaction by value: a server may quote them back in an error, and
 * a key set in `process.env` after crewline first read it, or given in a custom `env`, is not yet
 * known there.
 */
function registerCredentials(env: Record<string, string | undefined>, ...names: string[]): void {
  registerEnvironmentSecrets(Object.fromEntries(names.map((name) => [name, env[name]])));
}

function isMissing(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && message.includes(packageName);
}

/**
 * A factory exported by an optional AI SDK package, loaded on first use. A package that is not
 * installed is `provider_unavailable`, naming the command that adds it with the project's package
 * manager.
 */
function factoryFrom<T>(packageName: string, exportName: string, id: string, loadPackage?: PackageLoader): T {
  let module: unknown;
  try {
    module = (loadPackage ?? defaultLoader)(packageName);
  } catch (error) {
    const reason = isMissing(error, packageName) ? 'is not installed' : 'could not be loaded';
    throw new CrewlineError(
      'models',
      'provider_unavailable',
      `model "${id}" needs ${packageName}, which ${reason}; add it to your project: ${installCommand(packageName)}`,
      { cause: error, details: { modelId: id, packageName } },
    );
  }
  const factory = (module as Record<string, unknown> | null)?.[exportName];
  if (typeof factory !== 'function') {
    throw new CrewlineError(
      'models',
      'provider_unavailable',
      `${packageName} has no ${exportName}; install a version for AI SDK 6: ${installCommand(`${packageName}@latest`)}`,
      { details: { modelId: id, packageName } },
    );
  }
  return factory as T;
}

type ProviderFactory = (options: Record<string, unknown>) => {
  (model: string): LanguageModelV3;
  chat?: (model: string) => LanguageModelV3;
  completion?: (model: string) => LanguageModelV3;
  chatModel?: (model: string) => LanguageModelV3;
};

/**
 * Builds the model of a built-in prefix (`openai`, `anthropic`, the OpenAI-compatible servers), its
 * package loaded on first use. A stored base URL wins over the environment: the model is rebuilt as
 * the run that stored it had it. Credentials are checked now so a missing key fails before the run.
 */
export function builtInModel(request: BuiltInModelRequest): LanguageModelV3 {
  const { id, provider, model, env, fromProcess, settings } = request;
  const fetch = request.fetch ? { fetch: request.fetch } : {};
  if (provider === 'openai' || provider === 'anthropic') {
    const keyVariable = provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
    const urlVariable = provider === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL';
    // The package first: a user missing both learns of both before the first fix, not one at a time.
    const create = factoryFrom<ProviderFactory>(
      modelProviderPackages[provider],
      provider === 'openai' ? 'createOpenAI' : 'createAnthropic',
      id,
      request.loadPackage,
    );
    if (!present(env[keyVariable])) throw new MissingApiKeyError(provider, keyVariable, id);
    registerCredentials(env, keyVariable, urlVariable);
    const baseURL = settings?.baseURL ?? (present(env[urlVariable]) ? env[urlVariable] : undefined);
    const instance = create({
      ...(fromProcess ? {} : { apiKey: env[keyVariable] }),
      ...(baseURL !== undefined ? { baseURL } : {}),
      // The OpenAI organization and project the stored model named: the project its calls are billed to.
      ...(provider === 'openai' && settings?.organization !== undefined
        ? { organization: settings.organization }
        : {}),
      ...(provider === 'openai' && settings?.project !== undefined ? { project: settings.project } : {}),
      ...fetch,
    });
    if (settings?.api === 'chat' && instance.chat) return instance.chat(model);
    if (settings?.api === 'completion' && instance.completion) return instance.completion(model);
    return instance(model);
  }
  const server = openAICompatibleServers[provider]!;
  const baseURL =
    settings?.baseURL ??
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
  const create = factoryFrom<ProviderFactory>(
    modelProviderPackages['openai-compatible'],
    'createOpenAICompatible',
    id,
    request.loadPackage,
  );
  // The compatible package does not read keys from the environment itself, so it is handed over.
  const compatible = create({ name: provider, baseURL, ...(present(apiKey) ? { apiKey } : {}), ...fetch });
  return compatible.chatModel!(model);
}
