// Review R4a of e4e637e: the terminal UI sent no inputs at all for a resume or fork confirmed while
// the detail panel of its checkpoint was still loading: a paid run started without the user's edit.
import { EventBus } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { BrowserDriver } from '../../test-support/drive-browser.js';
import { initialState } from './browser-state.js';
import { key } from './key-press.js';

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

describe('a fork confirmed while the detail panel of its checkpoint is still loading', () => {
  it('still sends the input edited earlier', async () => {
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
    await driver.press('3', 'down', 'return', key('u', { ctrl: true }));
    await driver.type('tea');
    await driver.press('return');
    expect(driver.state.edits[paused.id]?.inputs).toEqual({ topic: 'tea' });
    // The selection moved away and back: the detail is being read again (a slow store).
    driver.state = { ...driver.state, detail: { checkpointId: paused.id, status: 'loading' } };
    await driver.press('f', 'return', 'y');
    const started = driver.effects.find((effect) => effect.type === 'start-run');
    expect(started).toMatchObject({ request: { mode: 'fork', inputs: { topic: 'tea' } } });
  });
});
