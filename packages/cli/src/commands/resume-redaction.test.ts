import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { registerEnvironmentSecrets } from '@crewline/events';
import { Agent, Crew, type ModelProviderMap, registerProject, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCrewlineProcess } from '../test-support/subprocess.js';

// The project lives under this package's node_modules so that its crewline.config.ts resolves
// `@crewline/runtime` as a user's project resolves its installed copy.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

// The AI SDK provider the config builds its model with, as installed for the runtime (this package
// does not depend on it): imported by its file URL.
const openAICompatible = pathToFileURL(
  join(
    dirname(
      createRequire(fileURLToPath(new URL('../../../runtime/package.json', import.meta.url))).resolve(
        '@ai-sdk/openai-compatible',
      ),
    ),
    'index.mjs',
  ),
).href;

// One key in the environment, one given to the provider in crewline.config.ts; the server quotes
// both in its answers.
const environmentKey = `EnvKey${randomBytes(12).toString('hex')}`;
const configKey = `CfgKey${randomBytes(12).toString('hex')}`;

let failing = true;

/**
 * An OpenAI-compatible server answering with both keys; refuses the second task while `failing`
 * (with a 400, which the AI SDK does not retry).
 */
function echoingServer(): Server {
  return createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const parsed = JSON.parse(body) as { model: string; messages: unknown[] };
      response.writeHead(failing && body.includes('Polish') ? 400 : 200, {
        'content-type': 'application/json',
      });
      if (failing && body.includes('Polish')) {
        response.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
        return;
      }
      const content = `final answer: bearer ${key} env ${environmentKey} end`;
      response.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: parsed.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
}

describe('resume prints a run’s live output and progress redacted', () => {
  const project = join(projects, `resume-redaction-${process.pid}`);
  let server: Server;
  let checkpoint: StoredCheckpoint;
  const savedKey = process.env.OPENAI_API_KEY;

  beforeAll(async () => {
    server = echoingServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const providerSource = `createOpenAICompatible({ name: 'fakeco', baseURL: ${JSON.stringify(baseURL)}, apiKey: ${JSON.stringify(configKey)} })`;
    await mkdir(project, { recursive: true });
    await writeFile(
      join(project, 'crewline.config.ts'),
      `import { createOpenAICompatible } from ${JSON.stringify(openAICompatible)};
import { defineConfig } from '@crewline/runtime';

export default defineConfig({ modelProviders: { fakeco: ${providerSource} } });
`,
    );
    // This process runs the first part of the run: the same provider, registered here too.
    process.env.OPENAI_API_KEY = environmentKey;
    registerEnvironmentSecrets();
    const { createOpenAICompatible } = (await import(openAICompatible)) as {
      createOpenAICompatible: (options: {
        name: string;
        baseURL: string;
        apiKey: string;
      }) => ModelProviderMap[string];
    };
    registerProject({
      modelProviders: { fakeco: createOpenAICompatible({ name: 'fakeco', baseURL, apiKey: configKey }) },
    });
    const provider = await providerOf('json');
    const location = join(project, '.checkpoints');
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: 'fakeco:m1' });
    const crew = new Crew({
      name: 'Keyed crew',
      agents: [writer],
      tasks: [
        new Task({ description: 'Draft the text', expectedOutput: 'A draft', agent: writer }),
        new Task({ description: 'Polish the draft', expectedOutput: 'A paragraph', agent: writer }),
      ],
      checkpoint: { location, provider, onEvents: ['task_completed'] },
    });
    await expect(crew.kickoff()).rejects.toThrow(/overloaded/);
    const [first] = await provider.list(provider.resolveLocation(location));
    if (first === undefined) throw new Error('the first part of the run wrote no checkpoint');
    checkpoint = first;
    failing = false;
  }, 60_000);

  afterAll(async () => {
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
    await new Promise((resolve) => server.close(resolve));
    await rm(project, { recursive: true, force: true });
  });

  it('neither the environment key nor the config key is in the progress lines or the output', async () => {
    const result = await runCrewlineProcess(['checkpoint', 'resume', checkpoint.id], {
      cwd: project,
      env: { OPENAI_API_KEY: environmentKey },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('task 2 Polish the draft completed: final answer: bearer [REDACTED]');
    expect(result.stdout).toMatch(/Output:\nfinal answer: bearer \[REDACTED\] env \[REDACTED\] end/);
    expect(result.stdout).not.toContain(environmentKey);
    expect(result.stdout).not.toContain(configKey);
  }, 60_000);

  it('nor in the --json document', async () => {
    const result = await runCrewlineProcess(['checkpoint', 'fork', checkpoint.id, '--json'], {
      cwd: project,
      env: { OPENAI_API_KEY: environmentKey },
    });
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as { output: string };
    expect(document.output).toBe('final answer: bearer [REDACTED] env [REDACTED] end');
    expect(result.stdout).not.toContain(environmentKey);
    expect(result.stdout).not.toContain(configKey);
  }, 60_000);
});
