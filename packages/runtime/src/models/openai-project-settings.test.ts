// createOpenAI({ project, organization }) sends OpenAI-Project and OpenAI-Organization with every
// request: the project (and organization) billed. A checkpoint stores both (ids, not secrets) and a
// resume or fork rebuilds the model with them (review RE F3: before, neither was stored nor reported,
// and the fork billed the key's default project).
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { readStoredModelSettings, storableModel, storedModelSettingsData } from './stored-model.js';
import { fakeChatServer } from './test-support/fake-chat-server.js';
import { fakeProvider } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };
let gateway: Awaited<ReturnType<typeof fakeChatServer>>;
const savedKey = process.env.OPENAI_API_KEY;

beforeEach(async () => {
  directory = temporaryDirectory();
  gateway = await fakeChatServer('the team gateway');
  process.env.OPENAI_API_KEY = 'sk-user-personal-key-000000000000';
});

afterEach(async () => {
  directory.cleanup();
  await gateway.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

describe('createOpenAI({ project, organization })', () => {
  it('is forked with the same project and organization headers', async () => {
    const llm = createOpenAI({
      baseURL: gateway.baseURL,
      project: 'proj_team',
      organization: 'org_team',
    }).chat('gpt-4o');
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
    const stored = (readCheckpoint(first).entities[0]!.data as { agents: { llmSettings?: unknown }[] })
      .agents[0]!;
    expect(stored.llmSettings).toEqual({
      baseURL: gateway.baseURL,
      api: 'chat',
      organization: 'org_team',
      project: 'proj_team',
    });

    await continueFromCheckpoint({ reference: first, mode: 'fork', registry: new ProjectRegistry() });
    expect(gateway.requests).toHaveLength(3);
    for (const request of gateway.requests) {
      expect(request.headers['openai-project']).toBe('proj_team');
      expect(request.headers['openai-organization']).toBe('org_team');
    }
  });

  it('is stored from headers given by hand too, and read back', () => {
    const model = createOpenAI({ headers: { 'OpenAI-Project': 'proj_by_hand' } })('gpt-4o');
    const storable = storableModel(model);
    expect(storable.settings).toEqual({ project: 'proj_by_hand' });
    expect(storable.unstored).toEqual([]);
    const data = storedModelSettingsData(storable.settings);
    expect(readStoredModelSettings(data)).toEqual({ project: 'proj_by_hand' });
  });

  it('is named as unstored for a provider no built-in prefix rebuilds with it', () => {
    const model = createOpenAI({ name: 'myproxy', project: 'proj_team' })('gpt-4o');
    expect(storableModel(model).unstored).toEqual(['headers (openai-project)']);
    expect(storableModel(fakeProvider('openai.chat').languageModel('gpt-4o')).unstored).toEqual([]);
  });
});
