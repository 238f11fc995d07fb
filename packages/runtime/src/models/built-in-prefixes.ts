// The prefixes crewline rebuilds without a registration. A module without imports: modelIdOf (which
// the agent loop's modules import) asks about them, and built-in-providers.ts builds their models.

export interface CompatibleServer {
  urlVariable: string;
  defaultURL: string | undefined;
  keyVariable: string;
}

/** OpenAI-compatible servers: where their base URL and (optional) key come from. */
export const openAICompatibleServers: Record<string, CompatibleServer> = {
  'openai-compatible': {
    urlVariable: 'OPENAI_COMPATIBLE_BASE_URL',
    defaultURL: undefined,
    keyVariable: 'OPENAI_COMPATIBLE_API_KEY',
  },
  ollama: {
    urlVariable: 'OLLAMA_BASE_URL',
    defaultURL: 'http://localhost:11434/v1',
    keyVariable: 'OLLAMA_API_KEY',
  },
  lmstudio: {
    urlVariable: 'LMSTUDIO_BASE_URL',
    defaultURL: 'http://localhost:1234/v1',
    keyVariable: 'LMSTUDIO_API_KEY',
  },
  vllm: { urlVariable: 'VLLM_BASE_URL', defaultURL: 'http://localhost:8000/v1', keyVariable: 'VLLM_API_KEY' },
};

/** True when `provider` is a prefix `builtInModel` knows. */
export function isBuiltInProvider(provider: string): boolean {
  return provider === 'openai' || provider === 'anthropic' || openAICompatibleServers[provider] !== undefined;
}
