import { describe, expect, it } from 'vitest';
import { ANTHROPIC_MODEL_ID, chooseModel, OPENAI_MODEL_ID } from './model-choice.js';
import { TUTORIAL_MODEL_ID } from './offline-model.js';

describe('chooseModel', () => {
  it('uses the offline model when no provider is configured', () => {
    expect(chooseModel({}, {})).toMatchObject({ id: TUTORIAL_MODEL_ID, offline: true });
  });

  it('prefers OpenAI, then Anthropic, then an OpenAI-compatible server', () => {
    const all = {
      OPENAI_API_KEY: 'a',
      ANTHROPIC_API_KEY: 'b',
      OPENAI_COMPATIBLE_BASE_URL: 'http://localhost:11434/v1',
      OPENAI_COMPATIBLE_MODEL: 'llama3.2',
    };
    expect(chooseModel({}, all)).toMatchObject({ id: OPENAI_MODEL_ID, offline: false });
    expect(chooseModel({}, { ...all, OPENAI_API_KEY: ' ' })).toMatchObject({ id: ANTHROPIC_MODEL_ID });
    expect(chooseModel({}, { ...all, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' })).toMatchObject({
      id: 'openai-compatible:llama3.2',
      offline: false,
    });
  });

  it('asks for the model name of an OpenAI-compatible server', () => {
    expect(() => chooseModel({}, { OPENAI_COMPATIBLE_BASE_URL: 'http://localhost:11434/v1' })).toThrow(
      /OPENAI_COMPATIBLE_MODEL/,
    );
  });

  it('lets --model, --offline and CREWLINE_MODEL win, in that order', () => {
    const env = { OPENAI_API_KEY: 'a', CREWLINE_MODEL: 'ollama:llama3.2' };
    expect(chooseModel({ model: 'anthropic:claude-sonnet-4-5', offline: true }, env).id).toBe(
      'anthropic:claude-sonnet-4-5',
    );
    expect(chooseModel({ offline: true }, env)).toMatchObject({ id: TUTORIAL_MODEL_ID, offline: true });
    expect(chooseModel({}, env)).toMatchObject({ id: 'ollama:llama3.2', offline: false });
    expect(chooseModel({}, { CREWLINE_MODEL: 'offline:other' }).offline).toBe(true);
  });

  it('never puts a key into what it returns', () => {
    const choice = chooseModel({}, { OPENAI_API_KEY: 'sk-test-1234567890abcdef' });
    expect(JSON.stringify(choice)).not.toContain('sk-test');
  });
});
