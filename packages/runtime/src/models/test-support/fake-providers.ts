import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LanguageModelV3, NoSuchModelError, type ProviderV3 } from '@ai-sdk/provider';
import { type OfflineModel, offlineModel } from '../offline/offline-model.js';

/**
 * An AI SDK provider built on the offline model that reports itself as another provider package
 * would (`google.generative-ai`, `azure.chat`...). Every model it makes answers through one offline
 * model, whose `calls` show what this provider instance was asked.
 */
export function fakeProvider(providerId: string, name = 'fake'): ProviderV3 & { offline: OfflineModel } {
  const offline = offlineModel({ name });
  const languageModel = (modelId: string): LanguageModelV3 => ({
    specificationVersion: 'v3',
    provider: providerId,
    modelId,
    supportedUrls: {},
    doGenerate: (options) => offline.doGenerate(options),
    doStream: (options) => offline.doStream(options),
  });
  const none = (modelType: NoSuchModelError['modelType']) => (modelId: string) => {
    throw new NoSuchModelError({ modelId, modelType });
  };
  return {
    specificationVersion: 'v3',
    languageModel,
    embeddingModel: none('embeddingModel'),
    imageModel: none('imageModel'),
    offline,
  };
}

/** A span that records nothing but its name. */
class RecordedSpan {
  constructor(readonly name: string) {}
  spanContext() {
    return { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 };
  }
  setAttribute() {
    return this;
  }
  setAttributes() {
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  setStatus() {
    return this;
  }
  updateName() {
    return this;
  }
  end() {}
  isRecording() {
    return true;
  }
  recordException() {}
}

/**
 * An OpenTelemetry-shaped tracer (what `experimental_telemetry.tracer` takes) recording the names of
 * the spans started. Its `marker` is a string no checkpoint may contain.
 */
export class RecordingTracer {
  readonly marker = 'planted-tracer-5c1e9a';
  readonly spans: string[] = [];

  startSpan(name: string): RecordedSpan {
    this.spans.push(name);
    return new RecordedSpan(name);
  }

  startActiveSpan(name: string, ...rest: unknown[]): unknown {
    const fn = rest.at(-1) as (span: RecordedSpan) => unknown;
    return fn(this.startSpan(name));
  }
}

/** A local server on 127.0.0.1 answering the OpenAI Responses API; records each request's path. */
export async function fakeOpenAIServer(): Promise<{
  baseURL: string;
  paths: string[];
  close: () => Promise<void>;
}> {
  const paths: string[] = [];
  const server: Server = createServer((request: IncomingMessage, response) => {
    request.resume(); // the request body is not needed: the answer depends only on the count
    request.on('end', () => {
      paths.push(request.url ?? '');
      const count = paths.length;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: `resp_${count}`,
          object: 'response',
          created_at: 1_700_000_000,
          model: 'gpt-4o-mini',
          status: 'completed',
          output: [
            {
              type: 'message',
              role: 'assistant',
              id: `msg_${count}`,
              status: 'completed',
              content: [
                { type: 'output_text', text: `answer ${count} from the local server`, annotations: [] },
              ],
            },
          ],
          usage: {
            input_tokens: 10,
            output_tokens: 5,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens_details: { reasoning_tokens: 0 },
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
