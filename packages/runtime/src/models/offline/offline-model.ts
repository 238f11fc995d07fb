import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import { CrewlineError } from '@crewline/events';
import { digest, keywords, OFFLINE_MARKER, requestSummary, textAnswer } from './offline-answer.js';
import type {
  OfflineModelCall,
  OfflineModelOptions,
  OfflineScriptStep,
  OfflineToolCall,
} from './offline-options.js';
import { type Answer, finish, streamOf } from './offline-response.js';
import { lastUserText, systemText } from './prompt-text.js';
import { sampleFromSchema } from './sample-from-schema.js';

const component = 'offline-model';
const offlineBrand = Symbol.for('crewline.offline-model');

/** The provider id every offline model reports. */
export const OFFLINE_PROVIDER = 'offline';

// The options and call records live in offline-options.ts, which offline-response.ts reads too.
export type {
  OfflineModelCall,
  OfflineModelOptions,
  OfflineScriptStep,
  OfflineToolCall,
  OfflineUsageOverride,
} from './offline-options.js';

/** A deterministic AI SDK language model that works without network or keys. */
export interface OfflineModel extends LanguageModelV3 {
  readonly provider: typeof OFFLINE_PROVIDER;
  /** Every request received, in order (failed ones included). */
  readonly calls: OfflineModelCall[];
  /** Forgets recorded calls and the simulated prompt cache. */
  reset(): void;
}

/** True when `value` is a model made by {@link offlineModel}. */
export function isOfflineModel(value: unknown): value is OfflineModel {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[offlineBrand] === true
  );
}

/**
 * An offline model for tests and for running without an API key. Its answers start with
 * `[offline model]`, are derived from the prompt only (the same prompt always gives the same answer),
 * and follow JSON response formats with a value that satisfies the schema.
 */
export function offlineModel(options: OfflineModelOptions = {}): OfflineModel {
  const name = options.name ?? 'default';
  const responseBytes = options.responseBytes ?? 400;
  if (!Number.isInteger(responseBytes) || responseBytes < 32) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `responseBytes must be an integer of at least 32, got ${String(responseBytes)}`,
    );
  }
  const calls: OfflineModelCall[] = [];
  const cachedSystems = new Set<string>();

  async function answer(
    callOptions: LanguageModelV3CallOptions,
    kind: OfflineModelCall['kind'],
  ): Promise<Answer> {
    const call = recordCall(calls.length + 1, kind, callOptions);
    calls.push(call);
    const latency =
      typeof options.latencyMs === 'function' ? options.latencyMs(call) : (options.latencyMs ?? 0);
    await sleep(latency, callOptions.abortSignal);
    const failure = failureFor(call, options.failOn);
    if (failure !== undefined) {
      throw new CrewlineError(component, 'model_error', `${OFFLINE_MARKER} ${failure}`, {
        details: { callIndex: call.index },
      });
    }
    const step = scriptStep(call, options.script);
    const content = contentFor(call, step, { name, responseBytes });
    return finish(call, content, options, cachedSystems);
  }

  const model: OfflineModel & { [offlineBrand]: true } = {
    specificationVersion: 'v3',
    provider: OFFLINE_PROVIDER,
    modelId: name,
    supportedUrls: {},
    calls,
    [offlineBrand]: true,
    reset() {
      calls.length = 0;
      cachedSystems.clear();
    },
    async doGenerate(callOptions): Promise<LanguageModelV3GenerateResult> {
      const result = await answer(callOptions, 'generate');
      return {
        content: result.content,
        finishReason: result.finishReason,
        usage: result.usage,
        warnings: [],
        response: { id: `offline-${digest(result.text).slice(0, 16)}`, modelId: name, timestamp: new Date() },
      };
    },
    async doStream(callOptions): Promise<LanguageModelV3StreamResult> {
      const result = await answer(callOptions, 'stream');
      return { stream: streamOf(result, name) };
    },
  };
  return model;
}

function recordCall(
  index: number,
  kind: OfflineModelCall['kind'],
  options: LanguageModelV3CallOptions,
): OfflineModelCall {
  // structuredClone keeps Uint8Array file data and drops nothing the prompt can hold.
  const prompt = structuredClone(options.prompt);
  const settings: OfflineModelCall['settings'] = {};
  for (const key of [
    'maxOutputTokens',
    'temperature',
    'topP',
    'topK',
    'stopSequences',
    'seed',
    'presencePenalty',
    'frequencyPenalty',
  ] as const) {
    if (options[key] !== undefined)
      (settings as Record<string, unknown>)[key] = structuredClone(options[key]);
  }
  const firstSystem = prompt.find((message) => message.role === 'system');
  return {
    index,
    kind,
    prompt,
    system: systemText(prompt),
    systemProviderOptions: firstSystem?.providerOptions,
    messages: prompt.filter((message) => message.role !== 'system'),
    userText: lastUserText(prompt),
    tools: (options.tools ?? []).map((tool) =>
      tool.type === 'function'
        ? { name: tool.name, description: tool.description, inputSchema: tool.inputSchema }
        : { name: tool.name, description: undefined, inputSchema: undefined },
    ),
    toolChoice: options.toolChoice,
    responseFormat: options.responseFormat,
    settings,
    providerOptions:
      options.providerOptions === undefined ? undefined : structuredClone(options.providerOptions),
  };
}

function sleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (milliseconds <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The offline model call was aborted', 'AbortError');
}

function failureFor(call: OfflineModelCall, failOn: OfflineModelOptions['failOn']): string | undefined {
  if (failOn === undefined) return undefined;
  if (Array.isArray(failOn)) {
    return failOn.includes(call.index) ? `simulated failure on call ${call.index} (failOn)` : undefined;
  }
  const verdict = failOn(call);
  if (verdict === false) return undefined;
  return verdict === true ? `simulated failure on call ${call.index} (failOn)` : verdict;
}

function scriptStep(
  call: OfflineModelCall,
  script: OfflineModelOptions['script'],
): OfflineScriptStep | undefined {
  if (script === undefined) return undefined;
  if (typeof script === 'function') return script(call);
  const position = call.messages.filter((message) => message.role === 'assistant').length;
  return script[position];
}

function toolCallsOf(step: OfflineScriptStep | undefined): OfflineToolCall[] | undefined {
  if (step === undefined || 'text' in step) return undefined;
  return 'toolCalls' in step ? step.toolCalls : [step];
}

function contentFor(
  call: OfflineModelCall,
  step: OfflineScriptStep | undefined,
  settings: { name: string; responseBytes: number },
): LanguageModelV3Content[] {
  const choice = call.toolChoice?.type ?? 'auto';
  const toolsAllowed = call.tools.length > 0 && choice !== 'none';
  const seed = digest(JSON.stringify(call.prompt));
  let scripted = toolsAllowed ? toolCallsOf(step) : undefined;
  if (toolsAllowed && scripted === undefined && (choice === 'required' || choice === 'tool')) {
    // A forced tool call with nothing scripted: call the forced (or first) tool with a schema sample.
    const forcedName = call.toolChoice?.type === 'tool' ? call.toolChoice.toolName : call.tools[0]!.name;
    const tool = call.tools.find((item) => item.name === forcedName);
    scripted = [
      {
        toolName: forcedName,
        input: sampleFromSchema(tool?.inputSchema, requestSummary(call.prompt, 60), 0),
      },
    ];
  }
  if (scripted !== undefined && scripted.length > 0) {
    return scripted.map((toolCall, index) => ({
      type: 'tool-call',
      toolCallId: toolCall.toolCallId ?? `offline_call_${seed.slice(0, 12)}_${index}`,
      toolName: toolCall.toolName,
      input: JSON.stringify(toolCall.input ?? {}),
    }));
  }
  if (step !== undefined && 'text' in step) return [{ type: 'text', text: step.text }];
  return [{ type: 'text', text: answerText(call, settings, seed) }];
}

function answerText(
  call: OfflineModelCall,
  settings: { name: string; responseBytes: number },
  seed: string,
): string {
  const format = call.responseFormat;
  if (format?.type !== 'json')
    return textAnswer(call.prompt, { modelName: settings.name, responseBytes: settings.responseBytes });
  const topic = keywords(requestSummary(call.prompt), 4).join(' ');
  if (format.schema === undefined) {
    return JSON.stringify({ answer: `${OFFLINE_MARKER} ${requestSummary(call.prompt)}` });
  }
  return JSON.stringify(sampleFromSchema(format.schema, topic, Number.parseInt(seed.slice(0, 6), 16)));
}
