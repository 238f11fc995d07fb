import { type CheckpointProvider, readDocument, type StoredCheckpoint } from '@crewline/runtime-state';
import { viewDocument } from '../core/document-view.js';
import { errorText } from '../tui/error-text.js';
import { findResumePlan } from '../tui/resume-plan.js';
import { type Action, type BrowserState, type Effect, initialState } from '../tui/state/browser-state.js';
import { type KeyPress, key } from '../tui/state/key-press.js';
import { update } from '../tui/state/update.js';
import { type SampleCheckpoints, sampleCheckpoints } from './sample-tree.js';

/**
 * Runs the browser's state machine like the app does, without a terminal: key presses go through
 * `update`, and list/detail/plan effects are carried out against a real provider. Run effects are only
 * recorded, so tests can assert exactly what would be started.
 */
export class BrowserDriver {
  state: BrowserState;
  readonly effects: Effect[] = [];
  readonly #provider: CheckpointProvider;
  readonly #location: string;

  constructor(state: BrowserState, provider: CheckpointProvider, location: string) {
    this.state = state;
    this.#provider = provider;
    this.#location = location;
  }

  list(): Promise<StoredCheckpoint[]> {
    return this.#provider.list(this.#location);
  }

  async dispatch(action: Action): Promise<void> {
    const result = update(this.state, action);
    this.state = result.state;
    for (const effect of result.effects) {
      this.effects.push(effect);
      if (effect.type === 'load-list')
        await this.dispatch({ type: 'list-loaded', checkpoints: await this.list() });
      if (effect.type === 'load-plan') {
        // As the app does (browser-app.tsx): the host's lookup, its failure as plan-failed.
        try {
          const plan = await findResumePlan(this.#provider, this.#location, effect.checkpointId);
          await this.dispatch({ type: 'plan-loaded', checkpointId: effect.checkpointId, plan });
        } catch (error) {
          await this.dispatch({
            type: 'plan-failed',
            checkpointId: effect.checkpointId,
            error: errorText(error),
          });
        }
      }
      if (effect.type === 'load-detail') {
        try {
          const document = await readDocument(this.#provider, this.#location, effect.checkpointId);
          await this.dispatch({
            type: 'detail-loaded',
            checkpointId: effect.checkpointId,
            view: viewDocument(document),
          });
        } catch (error) {
          await this.dispatch({
            type: 'detail-failed',
            checkpointId: effect.checkpointId,
            error: String(error),
          });
        }
      }
    }
  }

  /** Presses keys in order: a character, a key name (`down`, `return`…), or a full KeyPress. */
  async press(...keys: (string | KeyPress)[]): Promise<void> {
    for (const pressed of keys)
      await this.dispatch({ type: 'key', key: typeof pressed === 'string' ? key(pressed) : pressed });
  }

  /** Types text one character at a time. */
  async type(text: string): Promise<void> {
    for (const character of text) await this.press(character);
  }
}

/**
 * The browser on the sample checkpoints (sampleCheckpoints) in memory, their list loaded: the newest
 * checkpoint is selected and its detail read.
 */
export async function openSampleBrowser(): Promise<{ sample: SampleCheckpoints; driver: BrowserDriver }> {
  const sample = await sampleCheckpoints();
  const driver = new BrowserDriver(
    initialState({ location: sample.location, providerKind: 'memory' }),
    sample.provider,
    sample.location,
  );
  await driver.dispatch({ type: 'list-loaded', checkpoints: await driver.list() });
  return { sample, driver };
}
