import { randomBytes } from 'node:crypto';
import type { LanguageModelV3, ProviderV3 } from '@ai-sdk/provider';
import { type LogRecord, redactSecretsInText, setLogLevel, setLogSink } from '@crewline/events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { registerModelCredentials, registerProviderCredentials } from './model-credentials.js';

// A new value per test: the registry is process-wide.
const newSecret = (prefix: string) => `${prefix}${randomBytes(10).toString('hex')}`;

/** A model object shaped as the AI SDK provider packages make them: its provider's config on it. */
function modelWith(config: Record<string, unknown>, modelId = 'm1'): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'house.chat',
    modelId,
    config,
  } as unknown as LanguageModelV3;
}

function providerOf(model: LanguageModelV3): ProviderV3 {
  return { specificationVersion: 'v3', languageModel: () => model } as unknown as ProviderV3;
}

describe('registerModelCredentials', () => {
  it('registers the password of HTTP Basic auth and of the base URL', () => {
    const basicPassword = newSecret('basic');
    const urlPassword = newSecret('url');
    registerModelCredentials(
      modelWith({
        baseURL: `https://user:${urlPassword}@llm.internal/v1`,
        headers: () => ({
          Authorization: `Basic ${Buffer.from(`team:${basicPassword}`).toString('base64')}`,
        }),
      }),
    );
    expect(redactSecretsInText(`${basicPassword} ${urlPassword}`)).toBe('[REDACTED] [REDACTED]');
  });

  it('leaves short and non-credential values alone: they would blank ordinary words out', () => {
    registerModelCredentials(
      modelWith({
        headers: () => ({ Authorization: 'Bearer ollama', 'x-client-name': 'reporting-service-nightly' }),
      }),
    );
    expect(redactSecretsInText('ollama reporting-service-nightly')).toBe('ollama reporting-service-nightly');
  });

  it('leaves out a key-shaped value its model id or base URL host holds: the stored model names them', () => {
    const tag = randomBytes(4).toString('hex');
    const inModelId = `qwen2-${tag}`;
    const inHost = `gw${tag}x`;
    registerModelCredentials(
      modelWith(
        { baseURL: `https://${inHost}.example/v1`, headers: () => ({ 'x-api-key': inModelId, key: inHost }) },
        `${inModelId}-instruct`,
      ),
    );
    const text = `lm:${inModelId}-instruct at https://${inHost}.example/v1`;
    expect(redactSecretsInText(text)).toBe(text);
  });

  it('registers a key its model id merely holds: redacted elsewhere, the stored model id kept', () => {
    // Review of fixes #5: a containment filter left such a key visible everywhere.
    const key = newSecret('Dep7');
    registerModelCredentials(
      modelWith({ headers: () => ({ Authorization: `Bearer ${key}` }) }, `tenant-${key}-chat`),
    );
    expect(redactSecretsInText(`401 for key ${key}`)).toBe('401 for key [REDACTED]');
    expect(redactSecretsInText(`house.chat:tenant-${key}-chat`)).toBe(`house.chat:tenant-${key}-chat`);
  });

  it('leaves out a value equal to its model id: the stored model names it', () => {
    const modelId = newSecret('local-model-');
    registerModelCredentials(modelWith({ headers: () => ({ 'x-api-key': modelId }) }, modelId));
    expect(redactSecretsInText(`house.chat:${modelId}`)).toBe(`house.chat:${modelId}`);
  });

  it('registers what async headers resolve to', async () => {
    const key = newSecret('async');
    registerModelCredentials(modelWith({ headers: async () => ({ 'x-api-key': key }) }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(redactSecretsInText(key)).toBe('[REDACTED]');
  });
});

describe('registerProviderCredentials', () => {
  it('registers a provider’s key when it is registered, before any of its models is resolved', () => {
    const key = newSecret('provider');
    registerProviderCredentials({ house: providerOf(modelWith({ headers: () => ({ 'api-key': key }) })) });
    expect(redactSecretsInText(key)).toBe('[REDACTED]');
  });

  it('does not call async headers of a provider merely registered (they may fetch a token)', () => {
    let called = 0;
    const model = modelWith({
      headers: async () => {
        called += 1;
        return {};
      },
    });
    registerProviderCredentials({ house: providerOf(model) });
    expect(called).toBe(0);
    registerModelCredentials(model);
    expect(called).toBe(1);
  });

  it('leaves out a key-shaped value its provider’s name holds, and placeholder keys', () => {
    const tag = randomBytes(4).toString('hex');
    const name = `gateway-${tag}`;
    const records: LogRecord[] = [];
    const previous = setLogSink((record) => records.push(record));
    setLogLevel('debug');
    onTestFinished(() => {
      setLogSink(previous);
      setLogLevel('warn');
    });
    registerProviderCredentials({
      [name]: providerOf(modelWith({ headers: () => ({ Authorization: `Bearer ${tag}gw` }) })),
      other: providerOf(modelWith({ headers: () => ({ Authorization: `Bearer gateway-${tag}` }) })),
      local: providerOf(modelWith({ headers: () => ({ Authorization: 'Bearer sk-no-key-required' }) })),
    });
    expect(redactSecretsInText(`${tag}gw`)).toBe('[REDACTED]');
    const text = `${name}:m1 sk-no-key-required`;
    expect(redactSecretsInText(text)).toBe(text);
    const said = records.map((record) => record.message);
    expect(said).toContain(
      'model provider house.chat, header Authorization is not redacted by value: it is its provider name, model id or base URL host',
    );
    expect(said.join('\n')).not.toContain(`gateway-${tag} `);
  });

  it('skips a provider that refuses the id it is asked for', () => {
    const refusing = {
      specificationVersion: 'v3',
      languageModel: () => {
        throw new Error('no such model');
      },
    } as unknown as ProviderV3;
    expect(() => registerProviderCredentials({ house: refusing })).not.toThrow();
  });
});
