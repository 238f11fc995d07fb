import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { describe, expect, it } from 'vitest';
import { modelIdOf } from './model-id.js';
import { offlineModel } from './offline/offline-model.js';
import { resolveModel } from './resolve-model.js';
import { readStoredModelSettings, storableModel, withoutCredentials } from './stored-model.js';
import { fakeProvider } from './test-support/fake-providers.js';

describe('storableModel', () => {
  it('keeps a custom base URL and the OpenAI API, never the default address', () => {
    expect(storableModel(createOpenAI({ apiKey: 'k' })('gpt-4o'))).toEqual({ settings: {}, unstored: [] });
    expect(
      storableModel(createOpenAI({ apiKey: 'k', baseURL: 'https://proxy.example/v1' }).chat('gpt-4o')),
    ).toEqual({
      settings: { baseURL: 'https://proxy.example/v1', api: 'chat' },
      unstored: [],
    });
    expect(
      storableModel(createAnthropic({ apiKey: 'k', baseURL: 'https://gateway.example/anthropic' })('claude'))
        .settings,
    ).toEqual({
      baseURL: 'https://gateway.example/anthropic',
    });
    const compatible = createOpenAICompatible({ name: 'vllm', baseURL: 'http://gpu:9000/v1' }).chatModel(
      'mistral',
    );
    expect(storableModel(compatible).settings).toEqual({ baseURL: 'http://gpu:9000/v1' });
    expect(storableModel(offlineModel())).toEqual({ settings: {}, unstored: [] });
  });

  it('removes credentials from the base URL and says so', () => {
    const model = createOpenAI({
      apiKey: 'k',
      baseURL: 'https://team:hunter2-secret@proxy.example/v1?api-key=abc123secret&region=eu',
    })('gpt-4o');
    const { settings, unstored } = storableModel(model);
    expect(settings.baseURL).toBe('https://proxy.example/v1?region=eu');
    expect(JSON.stringify(settings)).not.toMatch(/hunter2|abc123/);
    expect(unstored).toEqual(['credentials in baseURL']);
    // A stored URL is cleaned again when read, whoever wrote it.
    expect(readStoredModelSettings({ baseURL: 'https://a:b@host/v1', api: 'nonsense' })).toEqual({
      baseURL: 'https://host/v1',
    });
    expect(withoutCredentials('http://127.0.0.1:8080/v1')).toEqual({
      address: 'http://127.0.0.1:8080/v1',
      removed: false,
    });
  });

  it('restores the OpenAI API and base URL it stored', () => {
    const model = resolveModel('openai:gpt-4o', {
      env: { OPENAI_API_KEY: 'sk-test-00000000000000' },
      settings: { baseURL: 'https://proxy.example/v1', api: 'chat' },
    });
    expect(model.provider).toBe('openai.chat');
    expect(storableModel(model).settings).toEqual({ baseURL: 'https://proxy.example/v1', api: 'chat' });
  });
});

describe('modelIdOf with model providers', () => {
  it('names a model by the AI SDK provider id, or by the prefix of the registered provider that made it', () => {
    expect(modelIdOf(fakeProvider('google.generative-ai').languageModel('gemini-2.5-pro'))).toBe(
      'google:gemini-2.5-pro',
    );
    expect(modelIdOf(fakeProvider('azure.chat').languageModel('gpt-4o'))).toBe('azure:gpt-4o');
    expect(modelIdOf(fakeProvider('amazon-bedrock').languageModel('claude'))).toBe('amazon-bedrock:claude');
    // Two OpenAI providers with different addresses: the one that made the model gives the prefix.
    const eu = createOpenAI({ apiKey: 'k', baseURL: 'https://eu.proxy.example/v1' });
    const us = createOpenAI({ apiKey: 'k', baseURL: 'https://us.proxy.example/v1' });
    expect(modelIdOf(us('gpt-4o'), undefined, { eu, us })).toBe('us:gpt-4o');
    expect(modelIdOf(us('gpt-4o'), undefined, [{ eu }])).toBe('openai:gpt-4o');
  });
});
