import { CrewlineError } from '@crewline/events';
import { TUTORIAL_MODEL_ID } from './offline-model.js';

/** The Anthropic model the tutorial uses when ANTHROPIC_API_KEY is set. */
export const ANTHROPIC_MODEL_ID = 'anthropic:claude-haiku-4-5';
/** The OpenAI model the tutorial uses when OPENAI_API_KEY is set. */
export const OPENAI_MODEL_ID = 'openai:gpt-4o-mini';

/** Which model the tutorial runs with, and why. */
export interface ModelChoice {
  /** A `provider:model` id; it is what checkpoints store. */
  id: string;
  /** True for the offline model (no network, no key, no cost). */
  offline: boolean;
  /** Why this model: shown to the user on start. */
  reason: string;
}

export interface ModelChoiceRequest {
  /** `--model <id>`: wins over everything. */
  model?: string;
  /** `--offline`: the offline model even when a key is set. */
  offline?: boolean;
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/**
 * Picks the model: `--model`, else `--offline`, else CREWLINE_MODEL, else a configured provider
 * (OPENAI_API_KEY, then ANTHROPIC_API_KEY, then OPENAI_COMPATIBLE_BASE_URL with
 * OPENAI_COMPATIBLE_MODEL), else the offline model. Keys are only checked for presence here; the
 * provider packages read them from the environment themselves, so they never reach a checkpoint.
 */
export function chooseModel(
  request: ModelChoiceRequest,
  env: Readonly<Record<string, string | undefined>>,
): ModelChoice {
  const offline = (reason: string): ModelChoice => ({ id: TUTORIAL_MODEL_ID, offline: true, reason });
  if (present(request.model)) {
    return {
      id: request.model.trim(),
      offline: request.model.trim().startsWith('offline:'),
      reason: '--model',
    };
  }
  if (request.offline) return offline('--offline');
  if (present(env.CREWLINE_MODEL)) {
    const id = env.CREWLINE_MODEL.trim();
    return { id, offline: id.startsWith('offline:'), reason: 'CREWLINE_MODEL is set' };
  }
  if (present(env.OPENAI_API_KEY))
    return { id: OPENAI_MODEL_ID, offline: false, reason: 'OPENAI_API_KEY is set' };
  if (present(env.ANTHROPIC_API_KEY))
    return { id: ANTHROPIC_MODEL_ID, offline: false, reason: 'ANTHROPIC_API_KEY is set' };
  if (present(env.OPENAI_COMPATIBLE_BASE_URL)) {
    if (!present(env.OPENAI_COMPATIBLE_MODEL)) {
      throw new CrewlineError(
        'tutorial',
        'invalid_config',
        'OPENAI_COMPATIBLE_BASE_URL is set but OPENAI_COMPATIBLE_MODEL is not; set it to the model the server runs (for Ollama e.g. OPENAI_COMPATIBLE_MODEL=llama3.2)',
      );
    }
    return {
      id: `openai-compatible:${env.OPENAI_COMPATIBLE_MODEL.trim()}`,
      offline: false,
      reason: `OPENAI_COMPATIBLE_BASE_URL is set (${env.OPENAI_COMPATIBLE_BASE_URL.trim()})`,
    };
  }
  return offline('no OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_COMPATIBLE_BASE_URL is set');
}
