// Review R4a of e4e637e: the terminal UI sent no inputs at all for a resume or fork confirmed while
// the detail panel of its checkpoint was still loading: a paid run started without the user's edit.
import { describe, expect, it } from 'vitest';
import { editTopicInput, openPausedFlowBrowser } from '../../test-support/paused-flow-browser.js';

describe('a fork confirmed while the detail panel of its checkpoint is still loading', () => {
  it('still sends the input edited earlier', async () => {
    const { driver, paused } = await openPausedFlowBrowser();
    await editTopicInput(driver, 'tea');
    expect(driver.state.edits[paused.id]?.inputs).toEqual({ topic: 'tea' });
    // The selection moved away and back: the detail is being read again (a slow store).
    driver.state = { ...driver.state, detail: { checkpointId: paused.id, status: 'loading' } };
    await driver.press('f', 'return', 'y');
    const started = driver.effects.find((effect) => effect.type === 'start-run');
    expect(started).toMatchObject({ request: { mode: 'fork', inputs: { topic: 'tea' } } });
  });
});
