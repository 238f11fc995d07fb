import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { registerEnvironmentSecrets } from '@crewline/events';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { registerProject } from '../project-config/project-config.js';
import { temporaryDirectory } from './support/fixtures.js';

// An OpenAI-compatible server answering every request with the same text.
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
          choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
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

const planted: string[] = [];
afterEach(() => {
  for (const name of planted.splice(0)) delete process.env[name];
});

async function storedModelAndRestore(provider: string): Promise<string> {
  const location = join(temporaryDirectory().path, 'checkpoints');
  const agent = new Agent({
    role: 'R',
    goal: 'G',
    backstory: 'B',
    llm: `${provider}:qwen2.5-7b-instruct`,
    checkpoint: { location, onEvents: ['*'] },
  });
  await agent.kickoff('hello');
  const files = readdirSync(location, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.json'))
    .sort();
  const stored = readFileSync(join(location, files.at(-1)!), 'utf8');
  expect(stored).not.toContain('[REDACTED]');
  expect(stored).toContain(`"${provider}:qwen2.5-7b-instruct"`);
  const restored = await Agent.fromCheckpoint({ restoreFrom: location });
  expect(restored).toBeInstanceOf(Agent);
  return stored;
}

it('LMSTUDIO_API_KEY=lmstudio with a provider named lmstudio (the AI SDK’s LM Studio page) is stored and restores', async () => {
  planted.push('LMSTUDIO_API_KEY');
  process.env.LMSTUDIO_API_KEY = 'lmstudio';
  registerEnvironmentSecrets();
  registerProject({
    modelProviders: {
      lmstudio: createOpenAICompatible({ name: 'lmstudio', baseURL, apiKey: process.env.LMSTUDIO_API_KEY }),
    },
  });
  await storedModelAndRestore('lmstudio');
});

it('an environment key equal to its provider’s name leaves the stored model intact: the kept name wins', async () => {
  planted.push('CREWLINE_TEST_GATEWAY_API_KEY');
  process.env.CREWLINE_TEST_GATEWAY_API_KEY = 'my-team-gateway';
  registerEnvironmentSecrets();
  registerProject({
    modelProviders: {
      'my-team-gateway': createOpenAICompatible({
        name: 'my-team-gateway',
        baseURL,
        apiKey: process.env.CREWLINE_TEST_GATEWAY_API_KEY,
      }),
    },
  });
  await storedModelAndRestore('my-team-gateway');
});
