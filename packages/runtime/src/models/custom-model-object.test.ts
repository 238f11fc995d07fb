// A model object the writing process cannot describe (a wrapLanguageModel result: no base URL, no
// settings, a middleware) must never be stored under an id a built-in prefix rebuilds: a resume from the
// CLI then called the provider's default address with the user's own key, without the middleware
// (trial T1, d6). Local servers stand in for the team's gateway and for the provider's default address.
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import { wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { isCustomModelId, modelIdOf } from './model-id.js';
import { offlineModel } from './offline/offline-model.js';
import { resolveModel } from './resolve-model.js';
import { fakeChatServer } from './test-support/fake-chat-server.js';
import { fakeProvider } from './test-support/fake-providers.js';

type ChatServer = Awaited<ReturnType<typeof fakeChatServer>>;

let directory: { path: string; cleanup: () => void };
let logs: LogRecord[];
let gateway: ChatServer;
let providerDefault: ChatServer;
const savedEnvironment = { key: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL };

beforeEach(async () => {
  directory = temporaryDirectory();
  logs = [];
  setLogSink((record) => logs.push(record));
  gateway = await fakeChatServer('the team gateway');
  providerDefault = await fakeChatServer('the default OpenAI address');
  // The user's own key, and the "default" OpenAI address pointed at a local server so nothing leaves.
  process.env.OPENAI_API_KEY = 'sk-user-personal-key-000000000000';
  process.env.OPENAI_BASE_URL = providerDefault.baseURL;
});

afterEach(async () => {
  directory.cleanup();
  await gateway.close();
  await providerDefault.close();
  for (const [name, value] of [
    ['OPENAI_API_KEY', savedEnvironment.key],
    ['OPENAI_BASE_URL', savedEnvironment.baseURL],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

// Marks every request it passes on, so a server can tell whether the middleware ran.
const teamMiddleware: LanguageModelV3Middleware = {
  specificationVersion: 'v3',
  transformParams: async ({ params }) => ({
    ...params,
    headers: { ...params.headers, 'x-team-middleware': 'ran' },
  }),
};

function teamModel(): LanguageModelV3 {
  return wrapLanguageModel({
    model: createOpenAI({ baseURL: gateway.baseURL }).chat('gpt-4o'),
    middleware: teamMiddleware,
  }) as LanguageModelV3;
}

function twoTaskCrew(llm: Agent['llm'], location = `${directory.path}/cp`): Crew {
  const agent = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Expert', llm });
  return new Crew({
    agents: [agent],
    tasks: [
      new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent }),
      new Task({ description: 'Write about {topic}', expectedOutput: 'a paragraph', agent }),
    ],
    checkpoint: { location },
  });
}

/** The checkpoint written after the first task: forking it runs the second task again. */
function firstCheckpoint(location = `${directory.path}/cp`): string {
  return checkpointFiles(location)[0]!;
}

function storedModelId(file: string): string {
  const crew = readCheckpoint(file).entities[0]!.data as { agents: { llm: string }[] };
  return crew.agents[0]!.llm;
}

const warnings = () => logs.filter((record) => record.level === 'warn').map((record) => record.message);

describe('a wrapped model the writing process has no name for', () => {
  it('is not stored as openai:gpt-4o, and a fork without a registration is refused before any call', async () => {
    await twoTaskCrew(teamModel()).kickoff({ inputs: { topic: 'AI' } });
    expect(gateway.requests).toHaveLength(2);
    expect(gateway.requests.every((request) => request.headers['x-team-middleware'] === 'ran')).toBe(true);

    // What `crewline checkpoint fork` does with a crewline.config.ts that does not register it.
    const failure = await continueFromCheckpoint({
      reference: firstCheckpoint(),
      mode: 'fork',
      registry: new ProjectRegistry(),
    }).catch((error: unknown) => error);
    // Before: the fork ran, a plain openai:gpt-4o called the default address with the user's key.
    expect(providerDefault.requests).toHaveLength(0);
    expect(gateway.requests).toHaveLength(2);
    const stored = storedModelId(firstCheckpoint());
    expect(stored).toBe('custom/openai.chat/gpt-4o');
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as Error).message).toContain(`models: { '${stored}': yourModel }`);
  });

  it('is rebuilt as registered when the restoring registry has a model under the stored id', async () => {
    await twoTaskCrew(teamModel()).kickoff({ inputs: { topic: 'AI' } });
    const stored = storedModelId(firstCheckpoint());

    // Another process: crewline.config.ts registers the model under the id the checkpoint names.
    const registry = new ProjectRegistry().register({ models: { [stored]: teamModel() } });
    const result = await continueFromCheckpoint({ reference: firstCheckpoint(), mode: 'fork', registry });
    expect(result.output).toBe('answer 3 from the team gateway');
    expect(gateway.requests).toHaveLength(3);
    expect(gateway.requests[2]!.headers['x-team-middleware']).toBe('ran');
    expect(providerDefault.requests).toHaveLength(0);
    // The fork stores the same id, so it can be continued again.
    expect(storedModelId(checkpointFiles(`${directory.path}/cp`).at(-1)!)).toBe(stored);
  });

  it('is warned about once per model at kickoff, naming registerProject and the id to register', async () => {
    const model = teamModel();
    await twoTaskCrew(model).kickoff({ inputs: { topic: 'AI' } });
    await twoTaskCrew(model, `${directory.path}/again`).kickoff({ inputs: { topic: 'AI' } });
    expect(warnings()).toHaveLength(1);
    const [warning] = warnings();
    for (const part of [
      'custom/openai.chat/gpt-4o',
      'registerProject(config)',
      'crewline.config.ts',
      "models: { 'custom/openai.chat/gpt-4o': yourModel }",
    ])
      expect(warning).toContain(part);
  });

  it('is stored under the name the writing process registered it by (registerProject, a registry)', () => {
    const model = teamModel();
    expect(modelIdOf(model, { 'team-model': model })).toBe('team-model');
    expect(warnings()).toHaveLength(0);
  });
});

describe('modelIdOf', () => {
  it('keeps provider:model for every model whose settings it can read, without a warning', () => {
    expect(modelIdOf(createOpenAI({ baseURL: gateway.baseURL }).chat('gpt-4o'))).toBe('openai:gpt-4o');
    expect(modelIdOf(createOpenAI()('gpt-4o-mini'))).toBe('openai:gpt-4o-mini');
    expect(
      modelIdOf(createOpenAICompatible({ name: 'ollama', baseURL: 'http://127.0.0.1:1/v1' })('llama3:8b')),
    ).toBe('ollama:llama3:8b');
    expect(modelIdOf(offlineModel({ name: 'team' }))).toBe('offline:team');
    expect(modelIdOf({ ...offlineModel({ name: 'copy' }) })).toBe('offline:copy');
    // No built-in prefix serves google: only a registration rebuilds it, as before.
    expect(modelIdOf(fakeProvider('google.generative-ai').languageModel('gemini'))).toBe('google:gemini');
    expect(warnings()).toHaveLength(0);
  });

  it('gives a wrapped model of a built-in prefix an id no built-in prefix serves', () => {
    expect(modelIdOf(teamModel())).toBe('custom/openai.chat/gpt-4o');
    expect(isCustomModelId('custom/openai.chat/gpt-4o')).toBe(true);
    expect(isCustomModelId('openai:gpt-4o')).toBe(false);
  });
});

describe('resolveModel of an id modelIdOf gave a model object it could not describe', () => {
  it('is not_rebuildable, saying how to register it, unless a model is registered under it', () => {
    let failure: unknown;
    try {
      resolveModel('custom/openai.chat/gpt-4o');
    } catch (error) {
      failure = error;
    }
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    for (const part of ['registerProject(config)', "models: { 'custom/openai.chat/gpt-4o': yourModel }"])
      expect((failure as Error).message).toContain(part);
    const model = teamModel();
    expect(
      resolveModel('custom/openai.chat/gpt-4o', { models: { 'custom/openai.chat/gpt-4o': model } }),
    ).toBe(model);
  });
});

describe('a model of a prefix no built-in serves, made from a config the script did not register (d2)', () => {
  it('is stored under its prefix, and a fork without it is refused naming what to register', async () => {
    const model = createOpenAICompatible({ name: 'gateway', baseURL: gateway.baseURL }).chatModel(
      'fake-model',
    );
    await twoTaskCrew(model).kickoff({ inputs: { topic: 'AI' } });
    expect(storedModelId(firstCheckpoint())).toBe('gateway:fake-model');

    const failure = await continueFromCheckpoint({
      reference: firstCheckpoint(),
      mode: 'fork',
      registry: new ProjectRegistry().register({ models: { 'team-model': model } }),
    }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as Error).message).toContain("models: { 'gateway:fake-model': yourModel }");
    expect(gateway.requests).toHaveLength(2);
    expect(providerDefault.requests).toHaveLength(0);
  });
});
