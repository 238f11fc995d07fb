// A model rebuilt by modelProviders given by prefix is built through the OpenAI API the checkpoint
// stored (llmSettings.api, or the provider id of a custom/ id), not the provider's default (review RH
// of 76f3cce, H2): createOpenAI({ baseURL }).languageModel builds the Responses API model, and a fork of
// a chat model against a chat-only gateway failed ('Invalid JSON response' from /v1/responses).
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { setLogSink } from '@crewline/events';
import { customProvider, wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { resolveModel } from './resolve-model.js';
import { fakeChatServer } from './test-support/fake-chat-server.js';
import { fakeProvider } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };
let gateway: Awaited<ReturnType<typeof fakeChatServer>>;
const savedKey = process.env.OPENAI_API_KEY;

beforeEach(async () => {
  directory = temporaryDirectory();
  gateway = await fakeChatServer('the chat gateway');
  setLogSink(() => {});
  process.env.OPENAI_API_KEY = 'sk-user-personal-key-000000000000';
});

afterEach(async () => {
  directory.cleanup();
  await gateway.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

const passThrough: LanguageModelV3Middleware = { specificationVersion: 'v3' };

async function runThenFork(llm: LanguageModelV3): Promise<{ stored: unknown; output: string }> {
  const agent = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Expert', llm });
  const location = `${directory.path}/cp`;
  await new Crew({
    agents: [agent],
    tasks: [
      new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent }),
      new Task({ description: 'Write about {topic}', expectedOutput: 'a paragraph', agent }),
    ],
    checkpoint: { location },
  }).kickoff({ inputs: { topic: 'AI' } });
  const first = checkpointFiles(location)[0]!;
  const stored = (
    readCheckpoint(first).entities[0]!.data as { agents: { llm: string; llmSettings?: unknown }[] }
  ).agents[0]!;
  const result = await continueFromCheckpoint({
    reference: first,
    mode: 'fork',
    // What crewline.config.ts gives the CLI: the gateway's provider for the openai prefix.
    registry: new ProjectRegistry().register({
      modelProviders: { openai: createOpenAI({ baseURL: gateway.baseURL }) },
    }),
  });
  return { stored: { llm: stored.llm, llmSettings: stored.llmSettings }, output: String(result.output) };
}

describe('a chat model rebuilt by modelProviders', () => {
  it('forks a custom/openai.chat/ id through the provider’s chat API', async () => {
    const llm = wrapLanguageModel({
      model: createOpenAI({ baseURL: gateway.baseURL }).chat('gpt-4o'),
      middleware: passThrough,
    }) as LanguageModelV3;
    const { stored, output } = await runThenFork(llm);
    expect(stored).toMatchObject({ llm: 'custom/openai.chat/gpt-4o' });
    expect(output).toBe('answer 3 from the chat gateway');
    expect(gateway.requests.map((request) => request.path)).toEqual(Array(3).fill('/v1/chat/completions'));
  });

  it('forks an openai: id stored with api chat through the provider’s chat API', async () => {
    const { stored, output } = await runThenFork(createOpenAI({ baseURL: gateway.baseURL }).chat('gpt-4o'));
    expect(stored).toEqual({ llm: 'openai:gpt-4o', llmSettings: { baseURL: gateway.baseURL, api: 'chat' } });
    expect(output).toBe('answer 3 from the chat gateway');
    expect(gateway.requests.map((request) => request.path)).toEqual(Array(3).fill('/v1/chat/completions'));
  });

  it('resolves the stored API where the provider has it, its languageModel where it does not', () => {
    const openai = createOpenAI({ baseURL: gateway.baseURL });
    expect(
      resolveModel('openai:gpt-4o', { modelProviders: { openai }, settings: { api: 'completion' } }).provider,
    ).toBe('openai.completion');
    expect(resolveModel('custom/openai.chat/gpt-4o', { modelProviders: { openai } }).provider).toBe(
      'openai.chat',
    );
    const aliases = customProvider({
      languageModels: { 'gpt-4o': fakeProvider('openai.x').languageModel('gpt-4o') },
    });
    expect(
      resolveModel('openai:gpt-4o', { modelProviders: { openai: aliases }, settings: { api: 'chat' } })
        .provider,
    ).toBe('openai.x');
  });
});
