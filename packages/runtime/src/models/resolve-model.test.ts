import { CrewlineError } from '@crewline/events';
import { generateText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { modelIdOf, parseModelId } from './model-id.js';
import { isOfflineModel, offlineModel } from './offline/offline-model.js';
import { MissingApiKeyError, resolveModel } from './resolve-model.js';

const savedEnvironment = { ...process.env };

afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnvironment)) delete process.env[key];
  Object.assign(process.env, savedEnvironment);
});

describe('parseModelId', () => {
  it('splits at the first colon so model names may hold colons', () => {
    expect(parseModelId('ollama:llama3.1:8b')).toEqual({ provider: 'ollama', model: 'llama3.1:8b' });
    expect(parseModelId('OpenAI:gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
  });

  it('rejects ids without a provider or a model, saying what the form is', () => {
    for (const bad of ['gpt-4o', ':gpt', 'openai:']) {
      expect(() => parseModelId(bad)).toThrow(/provider:model/);
    }
  });
});

describe('resolveModel', () => {
  it('resolves offline ids to offline models named after the id', () => {
    const model = resolveModel('offline:tutorial');
    expect(isOfflineModel(model)).toBe(true);
    expect(model.modelId).toBe('tutorial');
  });

  it('prefers a registered model or factory over built-in providers', () => {
    const mine = offlineModel({ name: 'custom' });
    expect(resolveModel('openai:gpt-4o', { models: { 'openai:gpt-4o': mine } })).toBe(mine);
    let built = 0;
    const factory = () => {
      built += 1;
      return offlineModel({ name: 'from-factory' });
    };
    expect(resolveModel('team:writer', { models: { 'team:writer': factory } }).modelId).toBe('from-factory');
    expect(built).toBe(1);
    // A registration may point at another id.
    expect(resolveModel('alias:fast', { models: { 'alias:fast': 'offline:fast' } }).modelId).toBe('fast');
  });

  it('builds OpenAI and Anthropic models when their keys are set (nothing is called)', () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-openai-000000000000',
      ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
    };
    const openai = resolveModel('openai:gpt-4o-mini', { env });
    expect(openai.provider.startsWith('openai')).toBe(true);
    expect(openai.modelId).toBe('gpt-4o-mini');
    const anthropic = resolveModel('anthropic:claude-sonnet-4-5', { env });
    expect(anthropic.provider).toBe('anthropic.messages');
    expect(modelIdOf(anthropic)).toBe('anthropic:claude-sonnet-4-5');
    expect(modelIdOf(openai)).toBe('openai:gpt-4o-mini');
  });

  it('throws a typed error naming the variable to set when a key is missing', () => {
    for (const [id, variable] of [
      ['openai:gpt-4o-mini', 'OPENAI_API_KEY'],
      ['anthropic:claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
    ] as const) {
      const error = (() => {
        try {
          resolveModel(id, { env: { [variable]: '  ' } });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(MissingApiKeyError);
      expect(CrewlineError.hasCode(error, 'invalid_config')).toBe(true);
      expect((error as MissingApiKeyError).envVar).toBe(variable);
      expect((error as Error).message).toContain(`set the ${variable} environment variable`);
    }
  });

  it('reads keys from process.env at resolve time by default', () => {
    delete process.env.OPENAI_API_KEY;
    expect(() => resolveModel('openai:gpt-4o')).toThrow(MissingApiKeyError);
    process.env.OPENAI_API_KEY = 'sk-test-later-0000000000000';
    expect(resolveModel('openai:gpt-4o').modelId).toBe('gpt-4o');
  });

  it('points OpenAI-compatible servers at their base URL, with local defaults', () => {
    const ollama = resolveModel('ollama:llama3.1:8b', { env: {} });
    expect(ollama.provider).toBe('ollama.chat');
    expect(ollama.modelId).toBe('llama3.1:8b');
    expect(modelIdOf(ollama)).toBe('ollama:llama3.1:8b');
    expect(modelIdOf(resolveModel('lmstudio:qwen', { env: {} }))).toBe('lmstudio:qwen');
    expect(modelIdOf(resolveModel('vllm:mistral', { env: { VLLM_BASE_URL: 'http://gpu:9000/v1' } }))).toBe(
      'vllm:mistral',
    );
    expect(() => resolveModel('openai-compatible:my-model', { env: {} })).toThrow(
      /OPENAI_COMPATIBLE_BASE_URL/,
    );
    const compatible = resolveModel('openai-compatible:my-model', {
      env: { OPENAI_COMPATIBLE_BASE_URL: 'http://localhost:9999/v1' },
    });
    expect(modelIdOf(compatible)).toBe('openai-compatible:my-model');
  });

  it('sends compatible requests to the configured base URL', async () => {
    const requests: string[] = [];
    const fakeFetch = (async (url: string | URL | Request) => {
      requests.push(String(url));
      return new Response(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 0,
          model: 'llama',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }) as typeof fetch;
    const model = resolveModel('ollama:llama', { env: {}, fetch: fakeFetch });
    const result = await generateText({ model, prompt: 'hi' });
    expect(result.text).toBe('hello');
    expect(requests).toEqual(['http://localhost:11434/v1/chat/completions']);
  });

  it('refuses unknown providers with a not_rebuildable error that says how to register one', () => {
    const error = (() => {
      try {
        resolveModel('mistral:large', { env: {} });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(CrewlineError.hasCode(error, 'not_rebuildable')).toBe(true);
    expect((error as Error).message).toContain('crewline.config.ts');
  });
});

describe('modelIdOf', () => {
  it('names offline models and registered models', () => {
    const model = offlineModel({ name: 'writer' });
    expect(modelIdOf(model)).toBe('offline:writer');
    expect(modelIdOf(model, { 'team:writer': model })).toBe('team:writer');
    expect(modelIdOf('openai:gpt-4o')).toBe('openai:gpt-4o');
  });
});
