/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
// Found by a new-user trial of the explorer's "Continue from here" form: the plan of a resume of an
// older checkpoint did not say it moves to a new branch and pays again for tasks its run had done,
// and a flow paused for human input had no answer field (each run paused again).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const pagePoll = { timeout: 20_000 };

class ContinueFormFlow extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    this.state.verdict = await this.ask(`Publish "${draft}" today?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    return verdict === 'yes' ? 'PUBLISHED' : 'DISCARDED';
  }
}
registerProject({ flows: { ContinueFormFlow } });

describe.skipIf(!haveBrowser && !inCi)("the explorer's Continue from here form in Chromium", () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let crewRun: CrewRun;
  let paused: StoredCheckpoint;
  let explorer: RunningExplorer;
  let browser: Browser;
  let page: Page;
  const pageErrors: Error[] = [];
  let logs: ReturnType<typeof captureLogs>;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    directory = await temporaryDirectory('crewline-continue-form-');
    crewRun = await writeCrewRun('json', directory.path);
    await crewRun.close();
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    await new ContinueFormFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['flow_paused', 'flow_finished'] },
    }).kickoff();
    paused = (await provider.list(provider.resolveLocation(location))).find(
      (checkpoint) => checkpoint.trigger === 'flow_paused',
    )!;
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      allowResume: true,
      pollIntervalMs: 200,
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => {
      pageErrors.push(error);
    });
    logs = captureLogs();
    await page.goto(explorer.url);
    await page.waitForSelector('body[data-ready="true"]');
  }, 60_000);
  afterAll(async () => {
    logs?.stop({ allowUnexpected: true });
    await browser?.close();
    await explorer?.close();
    await registry.close();
    await directory?.remove();
    expect(pageErrors).toEqual([]);
  });

  it("says, in a resume's plan of an older checkpoint, that it moves to a new branch and pays again", async () => {
    const [first, , last] = crewRun.checkpoints;
    await page.locator(`.node[data-id="${first!.id}"]`).click();
    const detail = page.locator(`.detail[data-checkpoint="${first!.id}"]`);
    await detail.waitFor();
    await detail.locator('select[name="mode"]').selectOption('resume');
    const warning = detail.locator('.rerun-plan .older-checkpoint');
    await expect.poll(() => warning.count(), pagePoll).toBe(1);
    expect(await warning.textContent()).toContain(
      `checkpoint ${first!.id} is not the latest of its run (${last!.id} is); a resume continues on a new branch`,
    );
    expect(await warning.textContent()).toContain('runs tasks 2 and 3 again, paying again');
    await detail.locator('select[name="mode"]').selectOption('fork');
    await expect.poll(() => warning.count(), pagePoll).toBe(0);
  });

  it('says, in the Runs panel, the question a run that ended paused again waits for', async () => {
    await page.locator(`.node[data-id="${paused.id}"]`).click();
    const detail = page.locator(`.detail[data-checkpoint="${paused.id}"]`);
    await detail.waitFor();
    await detail.locator('select[name="mode"]').selectOption('fork');
    // Run waits for the plan of the chosen mode (pressed before it is shown, it runs nothing).
    await detail.locator('.rerun-plan[data-planned="fork"]').waitFor();
    await detail.locator('.run-form button[type="submit"]').click();
    const run = page.locator('#runs .run').first();
    await expect.poll(() => run.locator('.badge').textContent(), pagePoll).toBe('paused');
    expect(await run.locator('.paused-question').textContent()).toContain(
      'Paused: approve waits for an answer: Publish "a short essay" today?',
    );
  }, 60_000);

  it("shows a paused flow's question and runs it with the answer typed", async () => {
    await page.locator(`.node[data-id="${paused.id}"]`).click();
    const detail = page.locator(`.detail[data-checkpoint="${paused.id}"]`);
    await detail.waitFor();
    expect(await detail.locator('.run-form .answer .question').textContent()).toBe(
      'Publish "a short essay" today?',
    );
    await detail.locator('.run-form textarea[name="answer"]').fill('yes');
    await detail.locator('.rerun-plan[data-planned]').waitFor();
    await detail.locator('.run-form button[type="submit"]').click();
    const run = page.locator('#runs .run').first();
    await expect.poll(() => run.locator('.badge').textContent(), pagePoll).toBe('finished');
    await run.locator('details summary').click();
    expect(await run.locator('details pre').textContent()).toContain('PUBLISHED');
  }, 60_000);
});
