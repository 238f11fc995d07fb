import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isSecretKey } from '@crewline/events';
import type { JsonObject, JsonValue } from '@crewline/runtime-state';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import { isCredentialParameter, registerModelCredentials } from './model-credentials.js';
import { configOf, modelAddress, type ProviderConfig } from './provider-config.js';

/**
 * The settings of a model object that a checkpoint stores next to its `provider:model` id, so that a
 * restore builds the same model: only plain, non-secret values. Keys, auth headers, `fetch`
 * functions and tracers are never stored.
 */
export interface StoredModelSettings {
  /** The provider's base URL when it is not the provider's default; credentials in it removed. */
  baseURL?: string;
  /** The OpenAI API the model uses when it is not the default Responses API. */
  api?: 'chat' | 'completion';
  /** The OpenAI organization its requests name (`createOpenAI({ organization })`): an id, not a secret. */
  organization?: string;
  /** The OpenAI project its requests name and bill (`createOpenAI({ project })`): an id, not a secret. */
  project?: string;
}

/** What a model's settings come to when stored: what is kept, and the names of what cannot be. */
export interface StorableModel {
  settings: StoredModelSettings;
  /** Settings the checkpoint cannot hold, by name (never their values). */
  unstored: string[];
}

const defaultAddresses = new Set(['https://api.openai.com/v1', 'https://api.anthropic.com/v1']);

// Headers a provider sets itself (or that carry the key, which is read from the environment again).
const providerHeaders = new Set([
  'anthropic-version',
  'anthropic-beta',
  'user-agent',
  'content-type',
  'x-goog-api-key',
  'x-api-key',
  'api-key',
  'authorization',
]);

/** A URL without its user name, password and credential-named query parameters. */
export function withoutCredentials(address: string): { address: string; removed: boolean } {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return { address, removed: false };
  }
  let removed = url.username !== '' || url.password !== '';
  url.username = '';
  url.password = '';
  for (const name of [...url.searchParams.keys()]) {
    if (isCredentialParameter(name)) {
      url.searchParams.delete(name);
      removed = true;
    }
  }
  if (!removed) return { address, removed };
  const text = url.toString();
  // URL adds a slash after a bare host; the provider packages join paths without one.
  return { address: address.endsWith('/') || !text.endsWith('/') ? text : text.slice(0, -1), removed };
}

// The OpenAI account headers (`createOpenAI({ organization, project })`) a rebuild of the built-in
// `openai:` prefix sends again: they choose which project is billed, so they are stored.
const openAIAccountHeaders = { 'openai-organization': 'organization', 'openai-project': 'project' } as const;

function isOpenAIAccountHeader(name: string): name is keyof typeof openAIAccountHeaders {
  return Object.hasOwn(openAIAccountHeaders, name);
}

/** The headers a provider sends (`headers: {...}` and its own) that have a value, if it shows them. */
function headersOf(config: ProviderConfig): [name: string, value: unknown][] {
  if (typeof config.headers !== 'function') return [];
  let headers: unknown;
  try {
    headers = (config.headers as () => unknown)();
  } catch {
    return []; // e.g. no key in this process: the headers cannot be looked at, nothing to report
  }
  if (
    headers === null ||
    typeof headers !== 'object' ||
    typeof (headers as Promise<unknown>).then === 'function'
  )
    return [];
  return Object.entries(headers as Record<string, unknown>).filter(([, value]) => value !== undefined);
}

/** What a checkpoint can store of a model object's settings, and what it cannot. */
export function storableModel(model: LanguageModelV3): StorableModel {
  // What is left out here may still be quoted in text the checkpoint stores (a server echoing the key).
  registerModelCredentials(model);
  const settings: StoredModelSettings = {};
  const unstored: string[] = [];
  const address = modelAddress(model);
  if (address !== undefined && !defaultAddresses.has(address)) {
    const clean = withoutCredentials(address);
    settings.baseURL = clean.address;
    if (clean.removed) unstored.push('credentials in baseURL');
  }
  const [provider, api] = model.provider.split('.');
  if (provider === 'openai' && (api === 'chat' || api === 'completion')) settings.api = api;
  const config = configOf(model);
  if (config && typeof config.fetch === 'function') unstored.push('fetch');
  if (config) {
    const custom: string[] = [];
    for (const [name, value] of headersOf(config)) {
      const lowerCase = name.toLowerCase();
      if (providerHeaders.has(lowerCase)) continue;
      // Only the built-in openai: prefix sends them again; any other rebuild would drop them.
      if (provider === 'openai' && isOpenAIAccountHeader(lowerCase) && typeof value === 'string')
        settings[openAIAccountHeaders[lowerCase]] = value;
      else custom.push(name);
    }
    if (custom.length > 0) unstored.push(`headers (${custom.join(', ')})`);
  }
  return { settings, unstored };
}

/** Stored model settings as JSON, or `undefined` when there are none to store. */
export function storedModelSettingsData(settings: StoredModelSettings | undefined): JsonObject | undefined {
  if (!settings) return undefined;
  const data: JsonObject = {};
  if (settings.baseURL !== undefined) data.baseURL = settings.baseURL;
  if (settings.api !== undefined) data.api = settings.api;
  if (settings.organization !== undefined) data.organization = settings.organization;
  if (settings.project !== undefined) data.project = settings.project;
  return Object.keys(data).length > 0 ? data : undefined;
}

/** Reads stored model settings back; anything else in the stored object is ignored. */
export function readStoredModelSettings(value: JsonValue | undefined): StoredModelSettings | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const settings: StoredModelSettings = {};
  if (typeof value.baseURL === 'string' && value.baseURL.length > 0)
    settings.baseURL = withoutCredentials(value.baseURL).address;
  if (value.api === 'chat' || value.api === 'completion') settings.api = value.api;
  if (typeof value.organization === 'string' && value.organization.length > 0)
    settings.organization = value.organization;
  if (typeof value.project === 'string' && value.project.length > 0) settings.project = value.project;
  return Object.keys(settings).length > 0 ? settings : undefined;
}

const callSettingKeys = new Set<string>([
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'stopSequences',
  'seed',
  'providerOptions',
]);

/**
 * Plain JSON of `value`, or `undefined` when some part of it is not plain data (a function, a class
 * instance such as a tracer, a symbol); the paths of those parts are added to `unstored`.
 */
function plainValue(value: unknown, path: string, unstored: string[]): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) {
    const items = value.map((item, index) => plainValue(item, `${path}[${index}]`, unstored));
    return items.every((item) => item !== undefined) ? (items as JsonValue[]) : undefined;
  }
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      unstored.push(path);
      return undefined;
    }
    const result: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      if (isSecretKey(key)) {
        unstored.push(`${path}.${key}`);
        continue;
      }
      const plain = plainValue(item, `${path}.${key}`, unstored);
      if (plain !== undefined) result[key] = plain;
    }
    return result;
  }
  if (value !== undefined) unstored.push(path);
  return undefined;
}

/**
 * The per-call settings a checkpoint stores: the generation settings crewline knows, as plain data.
 * Anything else (`experimental_telemetry` with its tracer, `headers`, an `abortSignal`, a function in
 * `providerOptions`) is left out and named in `unstored`, so a restored agent never calls the model
 * with a half-copied object.
 */
export function storableCallSettings(settings: ModelCallSettings): {
  settings: JsonObject;
  unstored: string[];
} {
  const stored: JsonObject = {};
  const unstored: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if (!callSettingKeys.has(key)) {
      unstored.push(`settings.${key}`);
      continue;
    }
    const plain = plainValue(value, `settings.${key}`, unstored);
    if (plain !== undefined) stored[key] = plain;
  }
  return { settings: stored, unstored };
}
