// What an offline model is given (OfflineModelOptions) and what it records of each request.
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolChoice,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';

/** One tool call the offline model makes. */
export interface OfflineToolCall {
  toolName: string;
  input: unknown;
  /** Default: derived from the prompt, so the same prompt gives the same id. */
  toolCallId?: string;
}

/**
 * What the model answers on one call when a script decides it: a tool call, several tool calls, or a
 * fixed text (for example invalid JSON, to test a retry).
 */
export type OfflineScriptStep = OfflineToolCall | { toolCalls: OfflineToolCall[] } | { text: string };

/** Token counts a `usage` function may return; missing fields fall back to the estimate. */
export interface OfflineUsageOverride {
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
}

/** Everything the offline model was asked on one call. Plain data, safe to compare in tests. */
export interface OfflineModelCall {
  /** 1-based number of this call on this model instance. */
  index: number;
  kind: 'generate' | 'stream';
  /** The full prompt, system messages included, as the provider received it (deep copy). */
  prompt: LanguageModelV3Prompt;
  /** System messages concatenated; `undefined` when there was none. */
  system: string | undefined;
  /** Provider options on the first system message (where Anthropic cache control is marked). */
  systemProviderOptions: SharedV3ProviderOptions | undefined;
  /** The prompt without system messages. */
  messages: LanguageModelV3Message[];
  /** Text of the last user message: the request being answered. */
  userText: string;
  /** Tools offered, by name, with their JSON schemas. */
  tools: { name: string; description: string | undefined; inputSchema: JSONSchema7 | undefined }[];
  toolChoice: LanguageModelV3ToolChoice | undefined;
  responseFormat: LanguageModelV3CallOptions['responseFormat'];
  settings: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    topK?: number;
    stopSequences?: string[];
    seed?: number;
    presencePenalty?: number;
    frequencyPenalty?: number;
  };
  providerOptions: SharedV3ProviderOptions | undefined;
}

export interface OfflineModelOptions {
  /** The model id (`offline:<name>` in a registry). Default `'default'`. */
  name?: string;
  /** Simulated latency per call in milliseconds, cut short by the call's abort signal. Default `0`. */
  latencyMs?: number | ((call: OfflineModelCall) => number);
  /**
   * Size of a plain-text answer in UTF-8 bytes (before `maxOutputTokens` truncation). Default `400`,
   * minimum `32`.
   */
  responseBytes?: number;
  /**
   * Token usage: `true` estimates four characters a token from prompt and answer; `false` reports
   * unknown (`undefined`) counts; a function overrides any count. Default `true`.
   */
  usage?: boolean | ((call: OfflineModelCall, answerText: string) => OfflineUsageOverride);
  /**
   * Simulates a provider prompt cache: a call whose system prompt starts with a system prompt this
   * instance has already seen reports that prefix as cache-read input tokens. Default `false`.
   */
  promptCache?: boolean;
  /**
   * Tool calls to make. An array is read by position: the step used is the number of assistant turns
   * already in the prompt, so a resumed conversation continues the script where it stopped and each
   * new conversation starts it from the top. Tool-call steps only apply when tools are offered (and
   * tool choice is not `'none'`); past the end of the script the model answers. A function decides per
   * call; returning `undefined` means "answer normally". Default: no tool calls.
   */
  script?: OfflineScriptStep[] | ((call: OfflineModelCall) => OfflineScriptStep | undefined);
  /**
   * Makes calls fail: the 1-based call numbers that throw, or a function returning `true` or an error
   * message. The call is still recorded in `calls`. Default: never fails.
   */
  failOn?: number[] | ((call: OfflineModelCall) => boolean | string);
}
