import { CrewlineError } from '@crewline/events';
import { type OfflineModel, offlineModel } from '@crewline/runtime/testing';
import { startCallReport } from './call-report.js';

/**
 * The id the tutorial's offline model is registered under. Checkpoints store this id, so a
 * checkpoint is rebuilt from its own contents: in this directory `crewline.config.ts` maps the id to
 * the slow model below; anywhere else the runtime's built-in `offline:` provider answers the same
 * text (the answers depend on the prompt and the model name only), just without the delay.
 */
export const TUTORIAL_MODEL_ID = 'offline:tutorial';

/** Simulated time per model call when neither `--latency` nor CREWLINE_TUTORIAL_LATENCY_MS says otherwise. */
export const DEFAULT_LATENCY_MS = 4000;

/** Environment variable that sets the offline model's delay per call, in milliseconds. */
export const LATENCY_VARIABLE = 'CREWLINE_TUTORIAL_LATENCY_MS';

/** Environment variable naming a file the offline model's calls are summarised in (test mode). */
export const CALLS_FILE_VARIABLE = 'CREWLINE_TUTORIAL_CALLS_FILE';

let shared: OfflineModel | undefined;

/**
 * The one offline model of this process. One instance (rather than a factory) so that its `calls`
 * count every request of the process: the demo and `crewline.config.ts` hand out the same object.
 * The delay is read once, from CREWLINE_TUTORIAL_LATENCY_MS (default 4 s, so that a person has time
 * to press Ctrl+C between the two tasks).
 */
export function tutorialOfflineModel(
  env: Readonly<Record<string, string | undefined>> = process.env,
): OfflineModel {
  if (shared) return shared;
  shared = offlineModel({ name: 'tutorial', latencyMs: latencyFrom(env[LATENCY_VARIABLE]) });
  const callsFile = env[CALLS_FILE_VARIABLE];
  if (callsFile !== undefined && callsFile !== '') startCallReport(shared, callsFile);
  return shared;
}

/** Milliseconds from a latency's text (`--latency` or the variable), or `undefined` when it is not a number of them. */
export function parseLatency(text: string): number | undefined {
  const value = Number(text);
  return text.trim() !== '' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Milliseconds from a variable's text; the default when unset, an error message when it is not a number. */
export function latencyFrom(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return DEFAULT_LATENCY_MS;
  const value = parseLatency(text);
  if (value === undefined) {
    throw new CrewlineError(
      'tutorial',
      'invalid_argument',
      `${LATENCY_VARIABLE}="${text}" is not a number of milliseconds; use for example ${LATENCY_VARIABLE}=500`,
    );
  }
  return value;
}
