import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isSecretKey, keepNamesFromValueRedaction, logger, registerSecretValues } from '@crewline/events';
import { type ModelProviders, providerEntries, providerPrefixes } from './model-providers.js';
import { configOf } from './provider-config.js';

// Headers that carry a credential whatever their name says (`isSecretKey` knows `x-api-key`, `cookie`...).
const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'api-key', 'x-api-key']);

/** A query parameter or header of a provider's requests whose value is a credential. */
export function isCredentialParameter(name: string): boolean {
  return isSecretKey(name) || /^(?:key|token|sig|signature)$/i.test(name);
}

function decodedBase64(text: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64').toString('utf8');
  return decoded.includes('\uFFFD') ? undefined : decoded;
}

/**
 * The credentials in one header value: the value, and what follows its scheme (`Bearer <key>`); for
 * HTTP Basic the decoded `user:password` and the password (its base64 forms are redacted by value).
 */
function headerCredentials(value: string): string[] {
  const credentials = [value];
  const schemed = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S+)$/.exec(value.trim());
  if (schemed === null) return credentials;
  const [, scheme, credential] = schemed as unknown as [string, string, string];
  credentials.push(credential);
  if (scheme.toLowerCase() !== 'basic') return credentials;
  const decoded = decodedBase64(credential);
  if (decoded === undefined) return credentials;
  credentials.push(decoded);
  const separator = decoded.indexOf(':');
  if (separator >= 0) credentials.push(decoded.slice(separator + 1));
  return credentials;
}

function registerHeaders(headers: unknown, names: readonly string[], provider: string): void {
  if (headers === null || typeof headers !== 'object') return;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    if (credentialHeaders.has(name.toLowerCase()) || isCredentialParameter(name))
      registerCredentials(headerCredentials(value), names, `model provider ${provider}, header ${name}`);
  }
}

const reportedSources = new Set<string>();

/**
 * Registers the values of one credential for redaction by value, but for one equal to a name the
 * checkpoint stores (`apiKey: 'my-gateway'` of the provider `my-gateway`, whose models are stored as
 * `my-gateway:qwen`): redacted, the stored model id would name no provider and the checkpoint could
 * not be restored. A value a name merely contains is registered: the kept names
 * (`keepNamesFromValueRedaction`) protect the stored name, and the value is redacted everywhere else.
 * Their shape is checked by `registerSecretValues` (`lm-studio` is a placeholder anyway).
 */
function registerCredentials(values: readonly string[], names: readonly string[], source: string): void {
  const lowerNames = new Set(names.map((name) => name.toLowerCase()));
  const kept = values.filter((value) => {
    const lower = value.trim().toLowerCase();
    if (lower === '' || !lowerNames.has(lower)) return true;
    if (!reportedSources.has(source)) {
      reportedSources.add(source);
      logger.debug(
        'redaction',
        `${source} is not redacted by value: it is its provider name, model id or base URL host`,
      );
    }
    return false;
  });
  registerSecretValues(kept, source);
}

function urlCredentials(address: unknown, names: readonly string[], provider: string): void {
  if (typeof address !== 'string') return;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return;
  }
  if (url.password !== '')
    registerCredentials(
      [url.password, decodeURIComponent(url.password)],
      names,
      `model provider ${provider}, base URL password`,
    );
  for (const [name, value] of url.searchParams)
    if (isCredentialParameter(name))
      registerCredentials([value], names, `model provider ${provider}, query parameter ${name}`);
}

function hostOf(address: unknown): string | undefined {
  if (typeof address !== 'string') return undefined;
  try {
    return new URL(address).hostname;
  } catch {
    return undefined;
  }
}

/** What a checkpoint stores of a model, and must find again: its provider, its id, its host. */
function namesOf(
  model: LanguageModelV3,
  config: { baseURL?: unknown },
  providerNames: readonly string[],
): string[] {
  const names = [...providerNames];
  if (typeof model.provider === 'string') names.push(model.provider);
  if (typeof model.modelId === 'string' && model.modelId !== probeModelId) names.push(model.modelId);
  const host = hostOf(config.baseURL);
  if (host !== undefined) names.push(host);
  return names;
}

/** The addresses a model's requests go to, as far as its provider configuration shows them. */
function addressesOf(model: LanguageModelV3, config: { baseURL?: unknown; url?: unknown }): unknown[] {
  const addresses: unknown[] = [config.baseURL];
  if (typeof config.url === 'function') {
    try {
      // With the empty path: the provider adds its query parameters (`queryParams`, `api-version`).
      addresses.push(
        (config.url as (options: { path: string; modelId: string }) => unknown)({
          path: '',
          modelId: model.modelId,
        }),
      );
    } catch {
      // A provider that cannot build its URL here shows no credential in it.
    }
  }
  return addresses;
}

const registeredModels = new WeakSet<object>();

/**
 * Registers for redaction by value the credentials an AI SDK model object's provider was made with:
 * the key of its auth header (`createOpenAICompatible({ apiKey })` sends `Authorization: Bearer <key>`),
 * credential-named custom headers and query parameters, and the password of its base URL. A key a
 * provider reads from the environment is registered with the environment; this covers a key given in
 * code or in `crewline.config.ts`, which no environment variable shows. Each model object is looked at
 * once; what it does not show (a key only its `fetch` adds) cannot be found.
 */
export function registerModelCredentials(model: LanguageModelV3): void {
  registerCredentialsOf(model, true, []);
}

// An async `headers` may fetch a token (Vertex's Google auth does): called only for a model about to
// be used, which calls it anyway, not for a provider merely registered.
function isAsyncFunction(value: unknown): boolean {
  return typeof value === 'function' && value.constructor?.name === 'AsyncFunction';
}

function registerCredentialsOf(
  model: LanguageModelV3,
  callAsyncHeaders: boolean,
  providerNames: readonly string[],
): void {
  if (registeredModels.has(model)) return;
  const config = configOf(model);
  const names = namesOf(model, config ?? {}, providerNames);
  // A value registered from elsewhere (the environment, addRedaction) must not rewrite them either.
  keepNamesFromValueRedaction(names);
  if (config === undefined) {
    registeredModels.add(model);
    return;
  }
  const provider = typeof model.provider === 'string' ? model.provider : 'of a model';
  for (const address of addressesOf(model, config)) urlCredentials(address, names, provider);
  if (typeof config.headers !== 'function') {
    registeredModels.add(model);
    return;
  }
  if (!callAsyncHeaders && isAsyncFunction(config.headers)) return;
  registeredModels.add(model);
  let headers: unknown;
  try {
    headers = (config.headers as () => unknown)();
  } catch {
    return; // e.g. a provider whose key variable is not set: it holds no key to register
  }
  if (headers !== null && typeof (headers as Promise<unknown>)?.then === 'function') {
    (headers as Promise<unknown>).then(
      (resolved) => registerHeaders(resolved, names, provider),
      () => undefined,
    );
    return;
  }
  registerHeaders(headers, names, provider);
}

// The model id providers are asked for to see their configuration. Making a model object sends nothing.
const probeModelId = 'crewline-credential-probe';

const registeredProviders = new WeakSet<object>();

/**
 * Registers the credentials of model providers (from `modelProviders` of `crewline.config.ts` or of a
 * `ProjectRegistry`) when they are registered, before any of their models is used: a key can reach a
 * checkpoint in a run's inputs before an agent resolves its model. Each provider is asked for one model
 * object (no request is made) whose configuration shows the key; a provider that refuses the made-up
 * id, or whose headers are async (they may fetch a token), shows nothing here: its models register
 * their credentials when they are resolved.
 */
export function registerProviderCredentials(providers: ModelProviders): void {
  // The prefixes models are stored under (`lm-studio:qwen`); which prefix is whose a registry may not show.
  const prefixes = providerPrefixes([providers]);
  for (const provider of providerEntries(providers)) {
    if (registeredProviders.has(provider)) continue;
    registeredProviders.add(provider);
    let model: LanguageModelV3;
    try {
      model = provider.languageModel(probeModelId);
    } catch {
      continue;
    }
    if (model !== null && typeof model === 'object') registerCredentialsOf(model, false, prefixes);
  }
}
