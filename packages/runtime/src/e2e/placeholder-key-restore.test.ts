import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { addRedaction, redactSecretsInText } from '@crewline/events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { registerProject } from '../project-config/project-config.js';
import { temporaryDirectory } from './support/fixtures.js';

// An OpenAI-compatible server answering with a text that names its provider, its model and a URL.
const answer =
  'Served by lm-studio, model lm-studio:qwen. Is there anything else? See postgres://localhost/app.';

let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const parsed = JSON.parse(body) as { model: string };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: parsed.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => {
  server.close();
});

it('a local server’s placeholder keys (lm-studio, anything, not-needed, a postgres password) rewrite no stored text, and the agent restores', async () => {
  registerProject({
    modelProviders: {
      // The keys the docs of LM Studio, LiteLLM and llama.cpp give.
      'lm-studio': createOpenAICompatible({ name: 'lm-studio', baseURL, apiKey: 'lm-studio' }),
      litellm: createOpenAICompatible({ name: 'litellm', baseURL, apiKey: 'anything' }),
      llamacpp: createOpenAICompatible({ name: 'llamacpp', baseURL, apiKey: 'not-needed' }),
      pg: createOpenAICompatible({ name: 'pg', baseURL: baseURL.replace('http://', 'http://app:postgres@') }),
    },
  });
  const text =
    'provider lm-studio, model lm-studio:qwen, anything not-needed, store postgres://localhost/app';
  expect(redactSecretsInText(text)).toBe(text);

  const location = join(temporaryDirectory().path, 'checkpoints');
  const agent = new Agent({
    role: 'R',
    goal: 'G',
    backstory: 'B',
    llm: 'lm-studio:qwen',
    checkpoint: { location, onEvents: ['*'] },
  });
  const result = await agent.kickoff('hello');
  expect(result.raw).toBe(answer);
  const files = readdirSync(location, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.json'))
    .sort();
  const stored = readFileSync(join(location, files.at(-1)!), 'utf8');
  expect(stored).not.toContain('[REDACTED]');
  expect(stored).toContain('lm-studio:qwen');

  const restored = await Agent.fromCheckpoint({ restoreFrom: location });
  expect(restored).toBeInstanceOf(Agent);
});

it('a registered value that a model id holds leaves the stored model alone, and the agent restores', async () => {
  const registered = `chat${randomBytes(4).toString('hex')}`;
  const modelId = `${registered}-instruct`;
  // Registered before the agent exists, as a key of the environment is.
  addRedaction({ values: [registered] });
  registerProject({
    modelProviders: {
      'lm-studio': createOpenAICompatible({ name: 'lm-studio', baseURL, apiKey: 'lm-studio' }),
    },
  });
  const location = join(temporaryDirectory().path, 'checkpoints');
  const agent = new Agent({
    role: 'R',
    goal: 'G',
    backstory: 'B',
    llm: `lm-studio:${modelId}`,
    checkpoint: { location, onEvents: ['*'] },
  });
  await agent.kickoff(`the value ${registered} alone`);
  const files = readdirSync(location, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.json'))
    .sort();
  for (const file of files) {
    const stored = readFileSync(join(location, file), 'utf8');
    expect(stored, file).not.toContain(`${registered} alone`);
    expect(stored, file).not.toContain('[REDACTED]-instruct');
  }
  const last = readFileSync(join(location, files.at(-1)!), 'utf8');
  // Elsewhere the value is still redacted.
  expect(last).toContain('the value [REDACTED] alone');
  expect(last).toContain(`lm-studio:${modelId}`);
  const restored = await Agent.fromCheckpoint({ restoreFrom: location });
  expect(restored).toBeInstanceOf(Agent);
});
