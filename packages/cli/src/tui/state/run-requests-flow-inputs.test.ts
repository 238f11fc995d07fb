// Review r1 of 5fd3465: the terminal UI sent a flow's continuation every saved kickoff input with
// the edited ones; merged into the state again, they undid what its completed methods changed.
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

describe('the terminal UI continuing a flow with an edited input', () => {
  it('sends the edited input alone, not the saved kickoff inputs with it', async () => {
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
    expect(driver.state.selectedKey).toBe(paused.id);
    // The Inputs tab lists count, then topic: the second is edited.
    await driver.press('3', 'down', 'return', key('u', { ctrl: true }));
    await driver.type('tea');
    await driver.press('return');
    expect(driver.state.edits[paused.id]?.inputs).toEqual({ topic: 'tea' });
    await driver.press('e', 'y');
    expect(driver.effects.find((effect) => effect.type === 'start-run')).toEqual({
      type: 'start-run',
      request: {
        mode: 'resume',
        checkpointId: paused.id,
        reference: paused.reference,
        inputs: { topic: 'tea' },
      },
    });
  });
});
