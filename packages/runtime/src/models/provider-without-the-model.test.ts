// modelProviders that serve a stored id's prefix but not its model (a customProvider or a registry
// without it) throw the AI SDK's NoSuchModelError (review RH of 76f3cce, H3). A restore let it out
// raw (AI_NoSuchModelError, no code, no advice); it is now the not_rebuildable refusal naming the id,
// and a crew whose agent with that model has finished its tasks is still continued.
import type { LanguageModelV3, LanguageModelV3Middleware } from '@ai-sdk/provider';
import { CrewlineError, setLogSink } from '@crewline/events';
import { createProviderRegistry, customProvider, wrapLanguageModel } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { resolveModel } from './resolve-model.js';
import { fakeProvider } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };

beforeEach(() => {
  directory = temporaryDirectory();
  setLogSink(() => {});
});

afterEach(() => directory.cleanup());

const passThrough: LanguageModelV3Middleware = { specificationVersion: 'v3' };

/** A registry whose `openai` prefix makes only `fast`. */
function registryWithoutGpt4o() {
  return createProviderRegistry({
    openai: customProvider({ languageModels: { fast: fakeProvider('openai.chat').languageModel('fast') } }),
  });
}

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
  return (readCheckpoint(file).entities[0]!.data as { agents: { llm: string }[] }).agents[0]!.llm;
}

describe('a stored model its prefix’s modelProviders do not make', () => {
  it('resolves a custom/ id to not_rebuildable, saying the providers lack the model', () => {
    let failure: unknown;
    try {
      resolveModel('custom/openai.chat/gpt-4o', { modelProviders: registryWithoutGpt4o() });
    } catch (error) {
      failure = error;
    }
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as Error).message).toContain('do not make "gpt-4o"');
    expect((failure as Error).message).toContain("models: { 'custom/openai.chat/gpt-4o': yourModel }");
  });

  it("refuses the fork of a wrapped model's checkpoint with not_rebuildable naming the id", async () => {
    const llm = wrapLanguageModel({
      model: fakeProvider('openai.chat').languageModel('gpt-4o'),
      middleware: passThrough,
    }) as LanguageModelV3;
    const location = `${directory.path}/cp`;
    await twoTaskCrew(llm, location).kickoff({ inputs: { topic: 'AI' } });
    const first = checkpointFiles(location)[0]!;
    expect(storedModelId(first)).toBe('custom/openai.chat/gpt-4o');

    const failure = await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      registry: new ProjectRegistry().register({ modelProviders: registryWithoutGpt4o() }),
    }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as CrewlineError).details).toMatchObject({ models: ['custom/openai.chat/gpt-4o'] });
  });

  it('refuses a provider:model id the same way, and continues a crew whose agent needs it no more', async () => {
    const written = fakeProvider('team.chat');
    const location = `${directory.path}/cp`;
    // A prefix no built-in serves: stored as team:writer, rebuilt only by modelProviders serving team.
    await twoTaskCrew(written.languageModel('writer'), location).kickoff({ inputs: { topic: 'AI' } });
    const [first, last] = [checkpointFiles(location)[0]!, checkpointFiles(location).at(-1)!];
    expect(storedModelId(first)).toBe('team:writer');

    const withoutWriter = {
      team: customProvider({ languageModels: { other: fakeProvider('team.chat').languageModel('other') } }),
    };
    const failure = await continueFromCheckpoint({
      reference: first,
      mode: 'fork',
      registry: new ProjectRegistry().register({ modelProviders: withoutWriter }),
    }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as CrewlineError).details).toMatchObject({ models: ['team:writer'] });
    // Told that the registered providers serve the prefix but not the model, not to serve the prefix
    // they already serve (review RK-6).
    expect((failure as Error).message).toContain('serve its prefix but do not make that model');
    expect((failure as Error).message).not.toContain("modelProviders: { 'team'");

    // Every task finished: nothing needs the model, the resume returns the saved result.
    const finished = await continueFromCheckpoint({
      reference: last,
      mode: 'resume',
      registry: new ProjectRegistry().register({ modelProviders: withoutWriter }),
    });
    expect(String(finished.output)).toContain('[offline model]');
  });
});
