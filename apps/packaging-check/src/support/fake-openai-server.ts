import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake server answered. */
export interface FakeRequest {
  path: string;
  model: string;
  /** The text of the last user message. */
  prompt: string;
  /** Headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeOpenAIServer {
  /** `http://127.0.0.1:<port>/v1`, what an OpenAI-compatible provider takes as `baseURL`. */
  baseURL: string;
  /** Every chat completion request so far, oldest first. */
  readonly requests: FakeRequest[];
  close(): Promise<void>;
}

interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * A local stand-in for an OpenAI-compatible server (`POST /v1/chat/completions`, not streamed — what
 * the runtime's `generateText` asks for) on 127.0.0.1: it answers every request with a numbered text
 * that names the model, and records the request, so a check can prove which process called it.
 */
export async function startFakeOpenAIServer(): Promise<FakeOpenAIServer> {
  const requests: FakeRequest[] = [];
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method !== 'POST' || path !== '/v1/chat/completions') {
      answer(response, 404, { error: { message: `the fake server has no ${request.method} ${path}` } });
      return;
    }
    const body = JSON.parse(await readBody(request)) as ChatRequest;
    if (body.stream === true) {
      answer(response, 400, { error: { message: 'the fake server does not stream' } });
      return;
    }
    const model = body.model ?? '';
    const prompt = textOf(body.messages?.filter((message) => message.role === 'user').at(-1)?.content);
    requests.push({ path, model, prompt, headers: request.headers });
    answer(response, 200, {
      id: `chatcmpl-fake-${requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: `[fake server] answer ${requests.length} from ${model}` },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
