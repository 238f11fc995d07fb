// What restores a custom/<provider id>/<model> id (review RE of 8048d66): modelProviders the restoring
// process registers for the id's prefix (crewline.config.ts `modelProviders: { ollama: createOllama() }`)
// rebuild it, as they rebuilt the provider:model id stored before (F2); the built-in prefixes never do.
// The crew's not_rebuildable message for such ids (F4) and the kickoff's warning (F5).
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import { wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { MissingParts } from '../agent/agent-snapshot.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { modelIdOf } from './model-id.js';
import { offlineModel } from './offline/offline-model.js';
import { resolveModel } from './resolve-model.js';
import { fakeProvider } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };
let logs: LogRecord[];

beforeEach(() => {
  directory = temporaryDirectory();
  logs = [];
  setLogSink((record) => logs.push(record));
});

afterEach(() => directory.cleanup());

const warnings = () => logs.filter((record) => record.level === 'warn').map((record) => record.message);

const passThrough: LanguageModelV3Middleware = { specificationVersion: 'v3' };

function twoTaskCrew(llm: Agent['llm'], location: string): Crew {
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

function storedModelId(file: string): string {
  const crew = readCheckpoint(file).entities[0]!.data as { agents: { llm: string }[] };
  return crew.agents[0]!.llm;
}

describe('a custom/ id whose prefix the restoring modelProviders serve', () => {
  it('forks through the provider crewline.config.ts registers for the prefix (an ollama package of its own)', async () => {
    // Like createOllama() of ai-sdk-ollama: provider 'ollama', its models show no address.
    const written = fakeProvider('ollama', 'written');
    const location = `${directory.path}/cp`;
    await twoTaskCrew(written.languageModel('llama3'), location).kickoff({ inputs: { topic: 'AI' } });
    const first = checkpointFiles(location)[0]!;
    expect(storedModelId(first)).toBe('custom/ollama/llama3');

    const restoring = fakeProvider('ollama', 'restoring');
    await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      registry: new ProjectRegistry().register({ modelProviders: { ollama: restoring } }),
    });
    expect(restoring.offline.calls.length).toBeGreaterThan(0);
    // The fork keeps storing the same id, so it can be continued again.
    expect(storedModelId(checkpointFiles(location).at(-1)!)).toBe('custom/ollama/llama3');
  });

  it('resolves through the provider, the model name cut after the provider id (colons kept)', () => {
    const provider = fakeProvider('ollama');
    const model = resolveModel('custom/ollama.chat/llama3.1:8b', { modelProviders: { ollama: provider } });
    expect(model.provider).toBe('ollama');
    expect(model.modelId).toBe('llama3.1:8b');
    const wrapped = resolveModel('custom/openai.chat/gpt-4o', {
      modelProviders: [{ openai: fakeProvider('openai.chat') }],
    });
    expect(wrapped.modelId).toBe('gpt-4o');
  });

  it('is still refused when only a built-in prefix would build it', () => {
    let failure: unknown;
    try {
      resolveModel('custom/ollama.chat/llama3', { modelProviders: { google: fakeProvider('google') } });
    } catch (error) {
      failure = error;
    }
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
  });
});

describe("the crew's not_rebuildable message for a custom/ id", () => {
  it('advises no modelProviders prefix cut from the model name, and says what a custom/ id is', () => {
    const missing = new MissingParts();
    missing.models.add('custom/ollama.chat/llama3.1:8b');
    let message = '';
    try {
      missing.throwIfAny('crew "c"');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("models: { 'custom/ollama.chat/llama3.1:8b': yourModel }");
    expect(message).not.toContain('modelProviders');
    expect(message).toContain('registerProject(config)');
  });

  it('still offers modelProviders for a plain prefix:model id beside it', () => {
    const missing = new MissingParts();
    missing.models.add('custom/openai.chat/gpt-4o');
    missing.models.add('google:gemini');
    let message = '';
    try {
      missing.throwIfAny('crew "c"');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(
      "or serve every model of a prefix with modelProviders: { 'google': create…({...}) }",
    );
    expect(message).not.toContain("'custom/openai.chat/gpt-4o': create");
  });
});

describe("the kickoff's warning for a model stored under a custom/ id", () => {
  it('names importing the model from the config or a registered name, and the prices it no longer gets', () => {
    const model = wrapLanguageModel({
      model: fakeProvider('openai.chat').languageModel('gpt-4o'),
      middleware: passThrough,
    }) as LanguageModelV3;
    expect(modelIdOf(model)).toBe('custom/openai.chat/gpt-4o');
    const [warning] = warnings();
    for (const part of [
      'import the model from crewline.config.ts',
      "llm: '",
      'registerProject(config)',
      "models: { 'custom/openai.chat/gpt-4o': yourModel }",
      'modelPrices',
      'its default address',
    ])
      expect(warning).toContain(part);
  });

  it('keeps a wrapped offline model under its offline: id, warning of nothing it cannot be billed or routed for', () => {
    const model = wrapLanguageModel({
      model: offlineModel({ name: 'team' }),
      middleware: passThrough,
    }) as LanguageModelV3;
    expect(modelIdOf(model)).toBe('offline:team');
    const said = warnings();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('the plain offline model');
    for (const part of ['default address', 'modelProviders', 'modelPrices', 'custom/'])
      expect(said[0]).not.toContain(part);
  });
});

describe('a wrapped offline model (review RH of 76f3cce, H4)', () => {
  it('is forked as the plain offline model, as before 8048d66, with nothing registered', async () => {
    const model = wrapLanguageModel({
      model: offlineModel({ name: 'team' }),
      middleware: passThrough,
    }) as LanguageModelV3;
    const location = `${directory.path}/cp`;
    await twoTaskCrew(model, location).kickoff({ inputs: { topic: 'AI' } });
    const first = checkpointFiles(location)[0]!;
    expect(storedModelId(first)).toBe('offline:team');
    const result = await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      registry: new ProjectRegistry(),
    });
    expect(String(result.output)).toContain('[offline model]');
    expect(storedModelId(checkpointFiles(location).at(-1)!)).toBe('offline:team');
  });
});
