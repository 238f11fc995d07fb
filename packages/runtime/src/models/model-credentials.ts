import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isSecretKey, registerSecretValues } from '@crewline/events';
import { type ModelProviders, providerEntries } from './model-providers.js';
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

function registerHeaders(headers: unknown): void {
  if (headers === null || typeof headers !== 'object') return;
  const values: string[] = [];
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    if (credentialHeaders.has(name.toLowerCase()) || isCredentialParameter(name))
      values.push(...headerCredentials(value));
  }
  registerSecretValues(values);
}

function urlCredentials(address: unknown): string[] {
  if (typeof address !== 'string') return [];
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return [];
  }
  const credentials: string[] = [];
  if (url.password !== '') credentials.push(url.password, decodeURIComponent(url.password));
  for (const [name, value] of url.searchParams) if (isCredentialParameter(name)) credentials.push(value);
  return credentials;
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
  registerCredentialsOf(model, true);
}

// An async `headers` may fetch a token (Vertex's Google auth does): called only for a model about to
// be used, which calls it anyway, not for a provider merely registered.
function isAsyncFunction(value: unknown): boolean {
  return typeof value === 'function' && value.constructor?.name === 'AsyncFunction';
}

function registerCredentialsOf(model: LanguageModelV3, callAsyncHeaders: boolean): void {
  if (registeredModels.has(model)) return;
  const config = configOf(model);
  if (config === undefined) {
    registeredModels.add(model);
    return;
  }
  registerSecretValues(addressesOf(model, config).flatMap(urlCredentials));
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
    (headers as Promise<unknown>).then(registerHeaders, () => undefined);
    return;
  }
  registerHeaders(headers);
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
  for (const provider of providerEntries(providers)) {
    if (registeredProviders.has(provider)) continue;
    registeredProviders.add(provider);
    let model: LanguageModelV3;
    try {
      model = provider.languageModel(probeModelId);
    } catch {
      continue;
    }
    if (model !== null && typeof model === 'object') registerCredentialsOf(model, false);
  }
}
