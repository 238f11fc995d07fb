import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link fakeChatServer} received. */
export interface ReceivedChatRequest {
  path: string;
  /** Header names lower-cased, as Node gives them. */
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A local server on 127.0.0.1 answering the OpenAI Chat Completions API (what `openai.chat(...)` and
 * the OpenAI-compatible providers call), naming itself in each answer; records every request.
 */
export async function fakeChatServer(name: string): Promise<{
  baseURL: string;
  requests: ReceivedChatRequest[];
  close: () => Promise<void>;
}> {
  const requests: ReceivedChatRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const count = requests.length;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: `chatcmpl-${count}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'fake-model',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `answer ${count} from ${name}` },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
