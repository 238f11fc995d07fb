import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { type LogRecord, redactSecretsInText, setLogSink } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { resolveModel } from './resolve-model.js';

// A key of no known shape: only its exact value gives it away (issue #9).
const key = `ck${randomBytes(14).toString('hex')}`;
const variables = ['OPENAI_COMPATIBLE_API_KEY', 'OPENAI_COMPATIBLE_BASE_URL'] as const;
const saved = new Map(variables.map((name) => [name, process.env[name]]));
let directory: { path: string; cleanup: () => void };
const logs: LogRecord[] = [];

beforeEach(() => {
  directory = temporaryDirectory();
  setLogSink((record) => void logs.push(record));
});

afterEach(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  setLogSink(null);
  logs.length = 0;
  directory.cleanup();
});

/** An OpenAI-compatible server that refuses the key and quotes it back, as some servers do. */
const echoingServer = (async (_url: string | URL | Request, init?: RequestInit) => {
  const sent = new Headers(init?.headers).get('authorization') ?? '';
  return new Response(JSON.stringify({ error: { message: `Invalid API key: ${sent.slice(7)}` } }), {
    status: 401,
    headers: { 'content-type': 'application/json' },
  });
}) as typeof globalThis.fetch;

function filesUnder(path: string): string[] {
  return (readdirSync(path, { recursive: true }) as string[])
    .map((entry) => join(path, entry))
    .filter((entry) => statSync(entry).isFile());
}

describe('credentials read by model providers', () => {
  it('a key set after crewline first redacted, echoed by the server, reaches no checkpoint, log or error', async () => {
    redactSecretsInText('the registry has read the environment before the key is set');
    process.env.OPENAI_COMPATIBLE_API_KEY = key;
    process.env.OPENAI_COMPATIBLE_BASE_URL = 'http://127.0.0.1:9/v1';
    const llm = resolveModel('openai-compatible:local-model', { fetch: echoingServer });
    const agent = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Expert', llm });
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'Research AI', expectedOutput: 'bullets', agent })],
      checkpoint: { location: directory.path, onEvents: ['*'] },
    });
    const failure = await crew.kickoff().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(inspect(failure, { depth: 8 })).toContain('Invalid API key');
    expect(inspect(failure, { depth: 8 })).not.toContain(key);
    const files = filesUnder(directory.path);
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) expect(readFileSync(file).includes(key), file).toBe(false);
    expect(inspect(logs, { depth: 8 })).not.toContain(key);
  });

  it('registers the keys of a custom environment map, which process.env never shows', () => {
    const custom = `cu${randomBytes(14).toString('hex')}`;
    resolveModel('vllm:some-model', { env: { VLLM_API_KEY: custom }, fetch: echoingServer });
    expect(redactSecretsInText(`refused ${custom}`)).toBe('refused [REDACTED]');
  });
});
