import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type LogRecord, redactSecretsInText, setLogSink } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import type { LanguageModelObject } from '../models/model-id.js';
import { loadProjectConfig } from '../project-config/load-project-config.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';
import { temporaryDirectory } from './support/fixtures.js';
import { importIfInstalled } from './support/optional-package.js';

// Keys of no known shape, given to a provider in code or in crewline.config: no environment variable
// shows them, so only registering the provider's own values can redact them. A new one per test: the
// registry is process-wide, and a key registered by one test must not make another pass.
const newKey = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;
const configKey = newKey('CfgKey');

/**
 * An OpenAI-compatible chat server that quotes the bearer key it receives: a tool call whose
 * argument holds it, then an answer holding it; a request about FAILME is refused with a 401 whose
 * message quotes it, as some servers do.
 */
function echoingServer(): Server {
  return createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const parsed = JSON.parse(body) as { model: string; messages: { role: string }[] };
      const reply = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (JSON.stringify(parsed.messages).includes('FAILME')) {
        reply(401, {
          error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error' },
        });
        return;
      }
      const toolCalled = parsed.messages.some((message) => message.role === 'tool');
      const message = toolCalled
        ? { role: 'assistant', content: `answer quoting ${key} as asked` }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'lookup', arguments: JSON.stringify({ query: `account ${key}` }) },
              },
            ],
          };
      reply(200, {
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: parsed.model,
        choices: [{ index: 0, message, finish_reason: toolCalled ? 'stop' : 'tool_calls' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    });
  });
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an account up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `found ${query}`,
});

let server: Server;
let baseURL: string;
const logs: LogRecord[] = [];

beforeAll(async () => {
  server = echoingServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  setLogSink((record) => void logs.push(record));
});

afterAll(async () => {
  setLogSink(null);
  await new Promise((resolve) => server.close(resolve));
});

/** Every file under `directory`, indexes, leases and temporary files included, by full path. */
function everyFile(directory: string): string[] {
  return (readdirSync(directory, { recursive: true }) as string[])
    .map((entry) => join(directory, entry))
    .filter((path) => statSync(path).isFile());
}

async function sqliteProvider(): Promise<CheckpointProvider | undefined> {
  const module = await importIfInstalled<{ SqliteProvider: new () => CheckpointProvider }>(
    '@crewline/provider-sqlite',
  );
  return module ? new module.SqliteProvider() : undefined;
}

/**
 * Runs a crew on `llm` whose first task has the model call a tool with the key and answer with it,
 * and whose second task is refused with the key quoted; the key is in the kickoff inputs too. Then
 * checks every byte under the checkpoint location (the SQLite database with its WAL, while open and
 * after closing), the error thrown and the logs.
 */
async function expectKeyNowhere(
  key: string,
  llm: LanguageModelObject | string,
  provider: CheckpointProvider | undefined,
): Promise<void> {
  const directory = temporaryDirectory();
  try {
    const location = provider ? join(directory.path, 'checkpoints.db') : directory.path;
    const agent = new Agent({
      role: 'Clerk',
      goal: 'Look accounts up',
      backstory: 'Careful',
      llm,
      tools: [lookup],
    });
    const crew = new Crew({
      agents: [agent],
      tasks: [
        new Task({ description: 'Look up the account named {note}', expectedOutput: 'x', agent }),
        new Task({ description: 'FAILME now', expectedOutput: 'x', agent }),
      ],
      checkpoint: { location, onEvents: ['*'], ...(provider ? { provider } : {}) },
    });
    const failure = await crew
      .kickoff({ inputs: { note: `inline ${key} here` } })
      .catch((error: unknown) => error);
    expect(messageOf(failure)).toContain('Incorrect API key provided: [REDACTED]');
    expect(inspect(failure, { depth: 8 })).not.toContain(key);
    const files = everyFile(directory.path);
    expect(files.length).toBeGreaterThan(0);
    const answered = files.some((file) => readFileSync(file).includes('answer quoting [REDACTED]'));
    expect(answered, 'the model answer was stored, redacted').toBe(true);
    const toolArgument = files.some((file) => readFileSync(file).includes('account [REDACTED]'));
    expect(toolArgument, 'the tool argument was stored, redacted').toBe(true);
    for (const file of files) expect(readFileSync(file).includes(key), file).toBe(false);
    await provider?.close?.();
    for (const file of everyFile(directory.path)) expect(readFileSync(file).includes(key), file).toBe(false);
    expect(inspect(logs, { depth: 8 })).not.toContain(key);
  } finally {
    directory.cleanup();
  }
}

function messageOf(failure: unknown): string {
  expect(failure).toBeInstanceOf(Error);
  return (failure as Error).message;
}

const hasSqlite = (await sqliteProvider()) !== undefined;

describe('a key given to a model provider in code is redacted by its value', () => {
  it('JSON provider: not in the inputs, the tool argument, the answer or the error stored', async () => {
    const key = newKey('CodeKey');
    const provider = createOpenAICompatible({ name: 'local', baseURL, apiKey: key });
    await expectKeyNowhere(key, provider.chatModel('m1'), undefined);
  });

  it.runIf(hasSqlite)('SQLite provider: not in the database or its WAL', async () => {
    const key = newKey('CodeKey');
    const provider = createOpenAICompatible({ name: 'local', baseURL, apiKey: key });
    await expectKeyNowhere(key, provider.chatModel('m1'), await sqliteProvider());
  });

  it('custom credential headers and query parameters are redacted too; other headers are not', () => {
    const headerToken = newKey('HeaderTok');
    const queryToken = newKey('QueryTok');
    const model = createOpenAICompatible({
      name: 'local',
      baseURL,
      apiKey: newKey('Other'),
      headers: { 'x-team-token': headerToken, 'x-request-source': 'nightly-reports' },
      queryParams: { token: queryToken, 'api-version': '2024-10-21' },
    }).chatModel('m1');
    const agent = new Agent({ role: 'Clerk', goal: 'g', backstory: 'b', llm: model });
    agent.resolveModel();
    expect(redactSecretsInText(`${headerToken} ${queryToken}`)).toBe('[REDACTED] [REDACTED]');
    expect(redactSecretsInText('nightly-reports 2024-10-21')).toBe('nightly-reports 2024-10-21');
  });
});

describe('a key given to a model provider in crewline.config is redacted by its value', () => {
  // Under this package's node_modules, so that the config resolves @ai-sdk/openai-compatible as a
  // project that installed it does.
  const project = new URL(`../../node_modules/.crewline-test/provider-key-${process.pid}/`, import.meta.url)
    .pathname;

  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'crewline.config.mjs'),
      `import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
export default {
  modelProviders: {
    fakeco: createOpenAICompatible({ name: 'fakeco', baseURL: ${JSON.stringify(baseURL)}, apiKey: ${JSON.stringify(configKey)} }),
  },
};
`,
    );
    await loadProjectConfig({ cwd: project });
  });

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('from the moment the config is loaded, before any of its models is used', () => {
    expect(redactSecretsInText(`inputs quoting ${configKey}`)).toBe('inputs quoting [REDACTED]');
  });

  it('JSON provider: not in the inputs, the tool argument, the answer or the error stored', async () => {
    await expectKeyNowhere(configKey, 'fakeco:m1', undefined);
  });

  it.runIf(hasSqlite)('SQLite provider: not in the database or its WAL', async () => {
    await expectKeyNowhere(configKey, 'fakeco:m1', await sqliteProvider());
  });
});
