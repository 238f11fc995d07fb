/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
// Found by a new-user trial of the explorer: what the page's words said wrong.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

class WordsFlow extends Flow<{ items: number }> {
  static flowName = 'WordsFlow-explorer';
  initialState = { items: 0 };

  @start() count() {
    this.state.items += 1;
    return this.state.items;
  }

  @listen('count') check(items: number) {
    return `checked ${items}`;
  }

  @listen('check') report(checked: string) {
    return `${checked}, reported`;
  }
}

describe.skipIf(!haveBrowser && !inCi)("the explorer page's words in Chromium", () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let browser: Browser;
  let page: Page;
  const pageErrors: Error[] = [];

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    directory = await temporaryDirectory('crewline-page-words-');
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    await new WordsFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => {
      pageErrors.push(error);
    });
    await page.goto(explorer.url);
    await page.waitForSelector('body[data-ready="true"]');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await explorer?.close();
    await registry.close();
    await directory?.remove();
    expect(pageErrors).toEqual([]);
  });

  it("counts a flow node's methods, as the CLI's listing does, not tasks", async () => {
    const progress = await page.locator('.node .progress').allTextContents();
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((text) => /^\d+\/3 methods$/.test(text))).toBe(true);
    expect(progress).toContain('3/3 methods');
  });
});
