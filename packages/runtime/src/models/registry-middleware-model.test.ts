// A model taken from an AI SDK provider registry built with languageModelMiddleware, the registry
// registered as modelProviders (registerProject in the script, the same registry in crewline.config.ts),
// is stored under the registry's prefix and rebuilt through the registry, middleware included (review
// RE F1: 8048d66 compared it with a model of the registry's raw provider, which shows an address the
// wrapped model does not, stored it as custom/openai.chat/gpt-4o and the fork was refused).
// Its own file: registerProject registers for the whole process.
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { type LogRecord, setLogSink } from '@crewline/events';
import { createProviderRegistry, customProvider } from 'ai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry, registerProject } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { modelIdOf } from './model-id.js';
import { fakeChatServer } from './test-support/fake-chat-server.js';

let directory: { path: string; cleanup: () => void };
let gateway: Awaited<ReturnType<typeof fakeChatServer>>;
let logs: LogRecord[];
const savedKey = process.env.OPENAI_API_KEY;

beforeEach(async () => {
  directory = temporaryDirectory();
  gateway = await fakeChatServer('the team gateway');
  logs = [];
  setLogSink((record) => logs.push(record));
  process.env.OPENAI_API_KEY = 'sk-user-personal-key-000000000000';
});

afterEach(async () => {
  directory.cleanup();
  await gateway.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

// Marks every request it passes on, so the server can tell whether the middleware ran.
const teamMiddleware: LanguageModelV3Middleware = {
  specificationVersion: 'v3',
  transformParams: async ({ params }) => ({
    ...params,
    headers: { ...params.headers, 'x-team-middleware': 'ran' },
  }),
};

function teamRegistry() {
  return createProviderRegistry(
    {
      openai: customProvider({
        languageModels: { 'gpt-4o': createOpenAI({ baseURL: gateway.baseURL }).chat('gpt-4o') },
      }),
    },
    { languageModelMiddleware: teamMiddleware },
  );
}

it('a registry model with middleware is stored under its prefix and forked through the registry', async () => {
  const registry = teamRegistry();
  // The script registers the config the CLI loads (README: registerProject(config)).
  registerProject({ modelProviders: registry });
  const llm = registry.languageModel('openai:gpt-4o') as LanguageModelV3;
  expect(modelIdOf(llm, undefined, [registry])).toBe('openai:gpt-4o');

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
  const stored = (readCheckpoint(first).entities[0]!.data as { agents: { llm: string }[] }).agents[0]!.llm;
  expect(stored).toBe('openai:gpt-4o');
  // A wrapped model of the user's own would match the registry's model the same way (neither shows an
  // address): one warning says so, and that llm: 'openai:gpt-4o' says it is the registry's (review RH H1).
  const said = logs.filter((record) => record.level === 'warn').map((record) => record.message);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain("llm: 'openai:gpt-4o'");

  // What `crewline checkpoint fork` does with crewline.config.ts exporting the same registry.
  const result = await continueFromCheckpoint({
    reference: first,
    mode: 'fork',
    registry: new ProjectRegistry().register({ modelProviders: teamRegistry() }),
  });
  expect(result.output).toBe('answer 3 from the team gateway');
  expect(gateway.requests).toHaveLength(3);
  expect(gateway.requests.every((request) => request.headers['x-team-middleware'] === 'ran')).toBe(true);
});

it("a registry's model given by its id is stored under it, rebuilt through the registry, without a warning", async () => {
  registerProject({ modelProviders: teamRegistry() });
  const agent = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Expert',
    llm: 'openai:gpt-4o',
  });
  const location = `${directory.path}/cp`;
  await new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent })],
    checkpoint: { location },
  }).kickoff({ inputs: { topic: 'AI' } });
  const stored = (
    readCheckpoint(checkpointFiles(location)[0]!).entities[0]!.data as { agents: { llm: string }[] }
  ).agents[0]!.llm;
  expect(stored).toBe('openai:gpt-4o');
  expect(logs.filter((record) => record.level === 'warn')).toEqual([]);
  expect(gateway.requests).toHaveLength(1);
  expect(gateway.requests[0]!.headers['x-team-middleware']).toBe('ran');
});

it('a registry model built again for every crew (a worker job, a factory) warns once per id, not once per object', () => {
  const registry = teamRegistry();
  registerProject({ modelProviders: registry });
  // registry.languageModel() makes a new object on every call (review RK-5).
  for (let job = 0; job < 3; job += 1)
    expect(modelIdOf(registry.languageModel('openai:gpt-4o') as LanguageModelV3, undefined, [registry])).toBe(
      'openai:gpt-4o',
    );
  // At most one: an earlier test of this file may have warned for this id already.
  expect(logs.filter((record) => record.level === 'warn').length).toBeLessThanOrEqual(1);
});
