/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
// Found by a new-user trial of the explorer: what the page's words said wrong.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { continueFromCheckpoint, Flow, listen, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
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
  /** The fork's branch: as long as a generated one, whose label ran into the red words. */
  const forkBranch = 'fork/7162572b-89cb07';

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    directory = await temporaryDirectory('crewline-page-words-');
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    await new WordsFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    // A crew run trimmed from its start (its first checkpoint pruned) and a fork whose fork point,
    // the run's second checkpoint, was pruned since (a store written before retention kept it).
    const crewRun = await writeCrewRun('json', directory.path);
    const crew = crewRun.checkpoints.filter((checkpoint) => checkpoint.entities[0]?.kind === 'crew');
    const logs = captureLogs();
    await continueFromCheckpoint({
      reference: crew[1]!.reference,
      mode: 'fork',
      branch: forkBranch,
      providers: registry,
      taskOutputs: { 1: 'Another outline' },
    }).finally(() => logs.stop({ allowUnexpected: true }));
    await crewRun.close();
    const resolved = provider.resolveLocation(location);
    await provider.delete(resolved, crew[0]!.id);
    await provider.delete(resolved, crew[1]!.id);
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      // As under npx: the page's words name the CLI as it was run.
      command: 'npx crewline',
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

  it("draws a run trimmed from its start as a gap of its own run, and an orphaned fork's words clear of its label", async () => {
    const crewLane = page.locator('.lane-label[data-branch="main"]');
    expect(await crewLane.count()).toBe(2);
    expect(await page.locator('.lane-label.orphaned[data-branch="main"]').count()).toBe(0);
    const orphan = page.locator(`.lane-label.orphaned[data-branch="${forkBranch}"] .branch`);
    expect(await orphan.count()).toBe(1);
    const words = page.locator('.pruned-label.orphaned');
    expect(await words.count()).toBe(1);
    expect(await words.first().textContent()).toContain('parent pruned');
    const label = (await orphan.boundingBox())!;
    const red = (await words.first().boundingBox())!;
    expect(red.x).toBeGreaterThanOrEqual(label.x + label.width);
  });

  it("counts a flow node's methods, as the CLI's listing does, not tasks", async () => {
    const progress = await page.locator('.node .progress').allTextContents();
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.filter((text) => text.endsWith('methods'))).toContain('3/3 methods');
    const flowLane = page.locator('.node[data-branch="main"] .progress');
    expect((await flowLane.allTextContents()).some((text) => /^\d+\/3 methods$/.test(text))).toBe(true);
  });

  // Last: it stops the server. The trial's page showed the browser's raw "Failed to fetch".
  it('says the server stopped when a click gets no answer', async () => {
    await explorer.close();
    await page.locator('.node').first().click();
    const said = page.locator('#detail .error');
    await said.waitFor();
    expect(await said.textContent()).toBe(
      'The explorer server does not answer: it was stopped (Ctrl+C) or cannot be reached. Start `npx crewline checkpoint serve` again and open the URL it prints.',
    );
    expect(await page.locator('#live').textContent()).toBe('server stopped');
  });
});
