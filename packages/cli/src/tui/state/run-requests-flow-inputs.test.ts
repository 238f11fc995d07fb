// Review r1 of 5fd3465: the terminal UI sent a flow's continuation every saved kickoff input with
// the edited ones; merged into the state again, they undid what its completed methods changed.
import { describe, expect, it } from 'vitest';
import { editTopicInput, openPausedFlowBrowser } from '../../test-support/paused-flow-browser.js';

describe('the terminal UI continuing a flow with an edited input', () => {
  it('sends the edited input alone, not the saved kickoff inputs with it', async () => {
    const { driver, paused } = await openPausedFlowBrowser();
    expect(driver.state.selectedKey).toBe(paused.id);
    // The Inputs tab lists count, then topic: the second is edited.
    await editTopicInput(driver, 'tea');
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
