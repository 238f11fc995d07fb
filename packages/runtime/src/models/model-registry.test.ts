import { readFileSync, writeFileSync } from 'node:fs';
import { createOpenAI } from '@ai-sdk/openai';
import { type LogRecord, setLogSink } from '@crewline/events';
import { createProviderRegistry } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import { Crew } from '../crew/crew.js';
import { checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { defineConfig, ProjectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { fakeOpenAIServer, fakeProvider, RecordingTracer } from './test-support/fake-providers.js';

let directory: { path: string; cleanup: () => void };
let logs: LogRecord[];
const savedKey = process.env.OPENAI_API_KEY;
beforeEach(() => {
  directory = temporaryDirectory();
  logs = [];
  setLogSink((record) => logs.push(record));
});
afterEach(() => {
  directory.cleanup();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

/** A two-task crew of one agent, checkpointed after each task. */
function twoTaskCrew(agent: Agent, options: { telemetry?: RecordingTracer } = {}): Crew {
  return new Crew({
    agents: [agent],
    tasks: [
      new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent }),
      new Task({ description: 'Write about {topic}', expectedOutput: 'a paragraph', agent }),
    ],
    checkpoint: { location: `${directory.path}/cp` },
    ...(options.telemetry ? { telemetry: { isEnabled: true, tracer: options.telemetry as never } } : {}),
  });
}

function writer(llm: Agent['llm'], extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}): Agent {
  return new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Expert', llm, ...extra });
}

/** The checkpoint written after the first task: forking it runs the second task again. */
function firstCheckpoint(): string {
  return checkpointFiles(`${directory.path}/cp`)[0]!;
}

function storedAgent(file: string): Record<string, unknown> {
  const crew = readCheckpoint(file).entities[0]!.data as { agents: Record<string, unknown>[] };
  return crew.agents[0]!;
}

describe('model providers rebuild any prefix:model on restore', () => {
  it.each([
    ['providers by prefix', (google: ReturnType<typeof fakeProvider>) => ({ google })],
    [
      'createProviderRegistry',
      (google: ReturnType<typeof fakeProvider>) => createProviderRegistry({ google }),
    ],
  ])('a google:… model is restored through %s given in the config', async (_name, providersOf) => {
    const original = fakeProvider('google.generative-ai', 'first-process');
    await twoTaskCrew(writer(original.languageModel('gemini-2.5-flash'))).kickoff({
      inputs: { topic: 'AI' },
    });
    expect(storedAgent(firstCheckpoint()).llm).toBe('google:gemini-2.5-flash');

    // Another process: the same provider configured in crewline.config.ts, nothing registered by id.
    const google = fakeProvider('google.generative-ai', 'second-process');
    const registry = new ProjectRegistry().register(defineConfig({ modelProviders: providersOf(google) }));
    const fork = await Crew.fork({ restoreFrom: firstCheckpoint() }, { registry });
    const result = await fork.kickoff();

    expect(google.offline.calls.length).toBeGreaterThan(0);
    expect(result.raw).toContain('second-process');
    // The fork stores the same id, so it can be continued again.
    const latest = checkpointFiles(`${directory.path}/cp`).at(-1)!;
    expect(storedAgent(latest).llm).toBe('google:gemini-2.5-flash');
  });

  it('azure and amazon-bedrock models are stored under their prefix and rebuilt by the registered provider', async () => {
    for (const [providerId, prefix] of [
      ['azure.responses', 'azure'],
      ['amazon-bedrock', 'amazon-bedrock'],
    ] as const) {
      const location = `${directory.path}/${prefix}`;
      const agent = writer(fakeProvider(providerId).languageModel('my-deployment'));
      const crew = new Crew({
        agents: [agent],
        tasks: [new Task({ description: 'Write', expectedOutput: 'text', agent })],
        checkpoint: { location },
      });
      await crew.kickoff();
      const file = checkpointFiles(location)[0]!;
      expect(storedAgent(file).llm).toBe(`${prefix}:my-deployment`);
      const provider = fakeProvider(providerId);
      const registry = new ProjectRegistry().register({ modelProviders: { [prefix]: provider } });
      const restored = await Crew.fromCheckpoint({ restoreFrom: file }, { registry });
      expect(restored.agents[0]!.resolveModel().model.provider).toBe(providerId);
    }
  });

  it('a prefix no provider serves is not_rebuildable, naming modelProviders and the prefix', async () => {
    await twoTaskCrew(writer(fakeProvider('google.generative-ai').languageModel('gemini'))).kickoff({
      inputs: { topic: 'AI' },
    });
    const failure = await Crew.fork(
      { restoreFrom: firstCheckpoint() },
      { registry: new ProjectRegistry() },
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'not_rebuildable' });
    expect(String((failure as Error).message)).toContain('google:gemini');
  });
});

describe('a model with a custom base URL', () => {
  it('is restored calling the same base URL (stored with the id, no registration needed)', async () => {
    const server = await fakeOpenAIServer();
    try {
      process.env.OPENAI_API_KEY = 'sk-test-not-a-real-key-000000000000';
      const proxy = createOpenAI({ baseURL: server.baseURL });
      await twoTaskCrew(writer(proxy('gpt-4o-mini'))).kickoff({ inputs: { topic: 'AI' } });
      expect(server.paths).toEqual(['/v1/responses', '/v1/responses']);
      const stored = storedAgent(firstCheckpoint());
      expect(stored.llm).toBe('openai:gpt-4o-mini');
      expect(stored.llmSettings).toEqual({ baseURL: server.baseURL });

      const fork = await Crew.fork({ restoreFrom: firstCheckpoint() }, { registry: new ProjectRegistry() });
      const result = await fork.kickoff();
      expect(server.paths).toHaveLength(3); // the second task, again, at the stored address
      expect(result.raw).toBe('answer 3 from the local server');
    } finally {
      await server.close();
    }
  });

  it('a custom prefix from the config (createOpenAI with a name and baseURL) is stored and rebuilt by it', async () => {
    const server = await fakeOpenAIServer();
    try {
      process.env.OPENAI_API_KEY = 'sk-test-not-a-real-key-000000000000';
      const myproxy = createOpenAI({ baseURL: server.baseURL, name: 'myproxy' });
      await twoTaskCrew(writer(myproxy('gpt-4o-mini'))).kickoff({ inputs: { topic: 'AI' } });
      expect(storedAgent(firstCheckpoint()).llm).toBe('myproxy:gpt-4o-mini');

      const registry = new ProjectRegistry().register(defineConfig({ modelProviders: { myproxy } }));
      const fork = await Crew.fork({ restoreFrom: firstCheckpoint() }, { registry });
      expect(fork.agents[0]!.resolveModel().model.provider).toBe('myproxy.responses');
      await fork.kickoff();
      expect(server.paths).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});

describe('telemetry', () => {
  it('a tracer passed through model settings never reaches the checkpoint, and a fork still runs', async () => {
    const tracer = new RecordingTracer();
    const settings = {
      temperature: 0,
      experimental_telemetry: { isEnabled: true, tracer },
    } as unknown as ModelCallSettings;
    await twoTaskCrew(writer('offline:writer', { settings })).kickoff({ inputs: { topic: 'AI' } });
    expect(tracer.spans.length).toBeGreaterThan(0); // it was used by the run...
    for (const file of checkpointFiles(`${directory.path}/cp`)) {
      const bytes = readFileSync(file, 'utf8');
      expect(bytes).not.toContain(tracer.marker);
      expect(bytes).not.toContain('experimental_telemetry');
    }
    expect(storedAgent(firstCheckpoint()).settings).toEqual({ temperature: 0 });
    // ...and the fork calls the model without a half-copied tracer.
    const fork = await Crew.fork({ restoreFrom: firstCheckpoint() });
    const result = await fork.kickoff();
    expect(result.raw).toContain('offline');
  });

  it('a checkpoint written before settings were filtered (a tracer copied without its methods) forks and runs', async () => {
    await twoTaskCrew(writer('offline:writer', { settings: { temperature: 0 } })).kickoff({
      inputs: { topic: 'AI' },
    });
    const file = firstCheckpoint();
    const document = JSON.parse(readFileSync(file, 'utf8'));
    // What older versions wrote for settings: { experimental_telemetry: { isEnabled: true, tracer } }.
    document.entities[0].data.agents[0].settings = {
      temperature: 0,
      experimental_telemetry: { isEnabled: true, tracer: { marker: 'planted-tracer-5c1e9a' } },
    };
    writeFileSync(file, JSON.stringify(document));
    const fork = await Crew.fork({ restoreFrom: file });
    expect(fork.agents[0]!.settings).toEqual({ temperature: 0 });
    // Before: every model call failed with "tracer.startActiveSpan is not a function".
    expect((await fork.kickoff()).raw).toContain('offline');
  });

  it('is a first-class option: used by every call, never stored, given again to fork and resume', async () => {
    const tracer = new RecordingTracer();
    await twoTaskCrew(writer('offline:writer'), { telemetry: tracer }).kickoff({ inputs: { topic: 'AI' } });
    expect(tracer.spans.filter((name) => name === 'ai.generateText')).toHaveLength(2);
    for (const file of checkpointFiles(`${directory.path}/cp`)) {
      const bytes = readFileSync(file, 'utf8');
      expect(bytes).not.toContain(tracer.marker);
      expect(bytes).not.toContain('isEnabled');
    }
    const again = new RecordingTracer();
    const fork = await Crew.fork(
      { restoreFrom: firstCheckpoint() },
      { telemetry: { isEnabled: true, tracer: again as never } },
    );
    await fork.kickoff();
    expect(again.spans.filter((name) => name === 'ai.generateText')).toHaveLength(1);

    // An agent's own telemetry, and Agent.fork with telemetry given again.
    const agentTracer = new RecordingTracer();
    const standalone = writer('offline:solo', {
      telemetry: { isEnabled: true, tracer: agentTracer as never },
      checkpoint: { location: `${directory.path}/solo`, onEvents: ['llm_call_completed'] },
    });
    await standalone.kickoff('Write about AI');
    expect(agentTracer.spans).toContain('ai.generateText');
    const soloFile = checkpointFiles(`${directory.path}/solo`)[0]!;
    expect(readFileSync(soloFile, 'utf8')).not.toContain(agentTracer.marker);
    const resumedTracer = new RecordingTracer();
    const resumed = await Agent.fork(
      { restoreFrom: soloFile },
      { telemetry: { isEnabled: true, tracer: resumedTracer as never } },
    );
    expect(resumed.telemetry?.tracer).toBe(resumedTracer);
  });
});

describe('settings a checkpoint cannot store', () => {
  it('are named in one warning when the first checkpoint is written, not discovered after a resume', async () => {
    process.env.OPENAI_API_KEY = 'sk-test-not-a-real-key-000000000000';
    const server = await fakeOpenAIServer();
    try {
      const model = createOpenAI({
        baseURL: server.baseURL,
        headers: { 'X-Team': 'research' },
        fetch: (input, init) => fetch(input, init),
      })('gpt-4o-mini');
      const settings = {
        temperature: 0.2,
        experimental_telemetry: { isEnabled: true, tracer: new RecordingTracer() },
        providerOptions: { openai: { user: 'u-1', onChunk: () => undefined } },
      } as unknown as ModelCallSettings;
      await twoTaskCrew(writer(model, { settings })).kickoff({ inputs: { topic: 'AI' } });

      const warnings = logs.filter((record) => record.level === 'warn');
      expect(warnings).toHaveLength(1);
      const message = warnings[0]!.message;
      for (const name of [
        'Writer',
        'model fetch',
        'model headers (x-team)',
        'settings.experimental_telemetry',
        'settings.providerOptions.openai.onChunk',
      ])
        expect(message).toContain(name);
      expect(message).not.toContain('research');
      const stored = storedAgent(checkpointFiles(`${directory.path}/cp`).at(-1)!);
      expect(stored.settings).toEqual({ temperature: 0.2, providerOptions: { openai: { user: 'u-1' } } });
    } finally {
      await server.close();
    }
  });
});
