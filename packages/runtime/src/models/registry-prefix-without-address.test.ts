// A registry built with languageModelMiddleware makes models that show no address, like any
// wrapLanguageModel(...) result (review RH of 76f3cce, H1). Compared under every prefix, the
// registry's model matched a user's own wrapped model of the same provider id and name: a
// wrapLanguageModel(openai('gpt-4o')) of the user's, with a team registry { team: ... } registered,
// was stored as team:gpt-4o and its fork called the team's gateway. The registry's model is now
// compared only under the prefix the model's provider id names; under that prefix the two cannot be
// told apart, and the kickoff warns once per model.
// Its own file: registerProject registers for the whole process.
import { createOpenAI, openai } from '@ai-sdk/openai';
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import { createProviderRegistry, customProvider, wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry, registerProject } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { modelIdOf } from './model-id.js';
import { fakeChatServer } from './test-support/fake-chat-server.js';
import { fakeProvider } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };
let team: Awaited<ReturnType<typeof fakeChatServer>>;
let personal: Awaited<ReturnType<typeof fakeChatServer>>;
let logs: LogRecord[];
const savedKey = process.env.OPENAI_API_KEY;

beforeEach(async () => {
  directory = temporaryDirectory();
  team = await fakeChatServer('the team gateway');
  personal = await fakeChatServer('my personal endpoint');
  logs = [];
  setLogSink((record) => logs.push(record));
  process.env.OPENAI_API_KEY = 'sk-user-personal-key-000000000000';
});

afterEach(async () => {
  directory.cleanup();
  await team.close();
  await personal.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

const warnings = () => logs.filter((record) => record.level === 'warn').map((record) => record.message);

const teamMiddleware: LanguageModelV3Middleware = {
  specificationVersion: 'v3',
  transformParams: async ({ params }) => ({
    ...params,
    headers: { ...params.headers, 'x-team-middleware': 'ran' },
  }),
};
const myMiddleware: LanguageModelV3Middleware = { specificationVersion: 'v3' };

function teamRegistry(prefix: string) {
  return createProviderRegistry(
    { [prefix]: createOpenAI({ baseURL: team.baseURL }) },
    { languageModelMiddleware: teamMiddleware },
  );
}

/** The team's gateway serves the chat API: its gpt-4o is its chat model (what the fake server answers). */
function teamChatRegistry(prefix: string) {
  return createProviderRegistry(
    {
      [prefix]: customProvider({
        languageModels: { 'gpt-4o': createOpenAI({ baseURL: team.baseURL }).chat('gpt-4o') },
      }),
    },
    { languageModelMiddleware: teamMiddleware },
  );
}

describe('a model object that shows no address, with a middleware registry registered', () => {
  it('is not stored under a registry prefix its provider id does not name, and its fork never calls that gateway', async () => {
    registerProject({ modelProviders: teamChatRegistry('team') });
    const mine = wrapLanguageModel({
      model: createOpenAI({ baseURL: personal.baseURL }).chat('gpt-4o'),
      middleware: myMiddleware,
    }) as LanguageModelV3;
    const agent = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Expert', llm: mine });
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
    expect(stored).toBe('custom/openai.chat/gpt-4o');

    const failure = await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      registry: new ProjectRegistry().register({ modelProviders: teamChatRegistry('team') }),
    }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect(personal.requests).toHaveLength(2);
    expect(team.requests).toHaveLength(0);
  });

  it('gets no prefix of another name from modelIdOf (a model at the default address, wrapped)', () => {
    const registry = teamRegistry('team');
    const mine = wrapLanguageModel({ model: openai('gpt-4o'), middleware: myMiddleware }) as LanguageModelV3;
    expect(modelIdOf(mine, undefined, [registry])).toBe('custom/openai.responses/gpt-4o');
    // The registry's own model under that prefix cannot be told from it either: refused on restore
    // (and warned at kickoff) rather than resumed through whichever registry matches.
    const theirs = registry.languageModel('team:gpt-4o') as LanguageModelV3;
    expect(modelIdOf(theirs, undefined, [registry])).toBe('custom/openai.responses/gpt-4o');
  });

  it('is stored under the prefix its provider id names, with one warning saying what cannot be told apart', () => {
    const registry = teamRegistry('openai');
    const mine = wrapLanguageModel({
      model: createOpenAI({ baseURL: personal.baseURL })('gpt-4o'),
      middleware: myMiddleware,
    }) as LanguageModelV3;
    expect(modelIdOf(mine, undefined, [registry])).toBe('openai:gpt-4o');
    expect(modelIdOf(mine, undefined, [registry])).toBe('openai:gpt-4o');
    const said = warnings();
    expect(said).toHaveLength(1);
    for (const part of ["llm: 'openai:gpt-4o'", 'wrapLanguageModel(...)', 'registerProject(config)'])
      expect(said[0]).toContain(part);
  });

  it('keeps a provider of another prefix whose models show no address either (as before 76f3cce)', () => {
    // Like createAmazonBedrock() registered as `bedrock`: its models never show an address.
    const bedrock = fakeProvider('amazon-bedrock');
    expect(modelIdOf(bedrock.languageModel('claude'), undefined, [{ bedrock }])).toBe('bedrock:claude');
    expect(warnings()).toEqual([]);
  });
});
