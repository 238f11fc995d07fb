// Review R4b of the TUI's split-paste guard (68da889): on a terminal that has not marked a paste, a
// paste cut into reads could still start a paid resume when a read of several keys closed the open
// confirmation and opened another (`n` then `e` inside "fine"), which the next read's `y` confirmed;
// and an Enter read with text in an editor that waits for a key alone became a line break unsaid.
import { describe, expect, it } from 'vitest';
import { openSampleBrowser } from '../../test-support/drive-browser.js';

/** The sample browser on the newest checkpoint of the Research crew's main branch. */
async function openBrowser() {
  const { sample, driver } = await openSampleBrowser();
  const head = sample.main.at(-1)!;
  while (driver.state.selectedKey !== head.id) await driver.press('down');
  return driver;
}

describe('keys read together before any paste mark', () => {
  it('do not confirm a resume a read of several keys reopened', async () => {
    const driver = await openBrowser();
    await driver.press('e');
    expect(driver.state.confirm?.mode).toBe('resume');
    await driver.press('fine');
    expect(driver.state.confirm?.mode).toBe('resume');
    await driver.press(' yes');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    // A y read alone confirms it.
    await driver.press('y');
    expect(driver.effects.at(-1)).toMatchObject({ type: 'start-run' });
  });

  it('say that an Enter read with text in a waiting editor was taken as text', async () => {
    const driver = await openBrowser();
    await driver.press('fw', 'hat\r');
    expect(driver.effects.some((effect) => effect.type === 'start-run')).toBe(false);
    expect(driver.state.message).toMatch(/press it alone/);
  });
});
