import { EventBus } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { initialState } from '../tui/state/browser-state.js';
import { key } from '../tui/state/key-press.js';
import { BrowserDriver } from './drive-browser.js';

/** Kicked off with { count: 1, topic }: its first method adds 10 to count, its second asks and waits. */
class EditedCounterFlow extends Flow<{ count: number; topic: string }> {
  initialState = { count: 0, topic: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') async report() {
    await this.ask('Report?');
    return `count ${this.state.count} on ${this.state.topic}`;
  }
}

/**
 * A flow run paused on its question (kicked off with count 1 and topic `kelp`, count now 11), in
 * memory, and the browser on it, its list loaded. `paused` is its paused checkpoint, the newest.
 */
export async function openPausedFlowBrowser(): Promise<{ driver: BrowserDriver; paused: StoredCheckpoint }> {
  const provider = new InMemoryProvider();
  await new EditedCounterFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff({
    inputs: { count: 1, topic: 'kelp' },
  });
  const driver = new BrowserDriver(
    initialState({ location: 'mem', providerKind: 'memory' }),
    provider,
    'mem',
  );
  await driver.dispatch({ type: 'list-loaded', checkpoints: await driver.list() });
  const paused = (await driver.list()).at(-1)!;
  return { driver, paused };
}

/** Edits the selected checkpoint's topic to `text`: the Inputs tab lists count, then topic. */
export async function editTopicInput(driver: BrowserDriver, text: string): Promise<void> {
  await driver.press('3', 'down', 'return', key('u', { ctrl: true }));
  await driver.type(text);
  await driver.press('return');
}
