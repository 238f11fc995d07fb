/// <reference lib="dom" />
// The explorer's "Continue from here" form sends the run's latest its plan was made against (review of
// fixes #2, CRITICAL): a resume of the checkpoint the page showed as the latest, submitted after
// another process continued the run while the user read the plan, is refused (nothing runs, nothing
// is paid twice) instead of moving to a new branch and running that process's task again.
import { existsSync, renameSync } from 'node:fs';
import { captureLogs } from '@crewline/runtime/testing';
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

describe.skipIf(!haveBrowser && !inCi)("the explorer's resume of the latest it showed, in Chromium", () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let crewRun: CrewRun;
  let aside: string;
  let explorer: RunningExplorer;
  let browser: Browser;
  let page: Page;
  const pageErrors: Error[] = [];
  let logs: ReturnType<typeof captureLogs>;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    directory = await temporaryDirectory('crewline-planned-head-');
    crewRun = await writeCrewRun('json', directory.path);
    await crewRun.close();
    // The run as the page shows it: its last task still to run.
    const last = crewRun.checkpoints.at(-1)!;
    aside = `${last.reference}.aside`;
    renameSync(last.reference, aside);
    explorer = await startExplorer({
      opened: await openLocation(crewRun.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      allowResume: true,
      // The server must not see the other process's checkpoint before the click: seen, the page
      // redraws and plans again ("not the latest"), and the click would run that plan.
      pollIntervalMs: 600_000,
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

  it('refuses the resume when the run went on while the plan was read, and runs nothing', async () => {
    const last = crewRun.checkpoints.at(-1)!;
    const head = crewRun.checkpoints.at(-2)!;
    await page.locator(`.node[data-id="${head.id}"]`).click();
    const detail = page.locator(`.detail[data-checkpoint="${head.id}"]`);
    await detail.waitFor();
    await detail.locator('select[name="mode"]').selectOption('resume');
    // The resume's plan (not the fork's, shown first: the CI rehearsal clicked under it on a loaded
    // machine), made with the checkpoint as the run's latest: task 3 will run.
    await detail.locator('.rerun-plan[data-planned="resume"]').waitFor();
    await expect.poll(() => detail.locator('.rerun-plan li[data-task="3"]').count(), pagePoll).toBe(1);
    expect(await detail.locator('.rerun-plan .older-checkpoint').count()).toBe(0);
    // Another process runs task 3 meanwhile.
    renameSync(aside, last.reference);
    await detail.locator('.run-form button[type="submit"]').click();
    const message = detail.locator('.form-message');
    await expect
      .poll(() => message.textContent(), pagePoll)
      .toContain(`another process continued that run since (its latest is now ${last.id}); nothing was run`);
    const provider = await providerOf('json');
    const stored = await provider.list(provider.resolveLocation(crewRun.location));
    expect(stored.map((checkpoint) => checkpoint.id).sort()).toEqual(
      crewRun.checkpoints.map((checkpoint) => checkpoint.id).sort(),
    );
  }, 60_000);

  // CI rehearsal, then a fix of the page: Run pressed while the plan of the chosen mode was still being
  // made sent the resume without its head, under a plan the user had not seen.
  it('runs nothing when Run is pressed before the plan is shown, and asks to press it again', async () => {
    // The checkpoint the page shows as the latest (the server has not polled since the other write).
    const shown = crewRun.checkpoints.at(-2)!;
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.locator(`.node[data-id="${shown.id}"]`).click();
    const detail = page.locator(`.detail[data-checkpoint="${shown.id}"]`);
    await detail.waitFor();
    await detail.locator('.rerun-plan[data-planned]').waitFor();
    await page.route('**/plan', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    try {
      await detail.locator('select[name="mode"]').selectOption('resume');
      await detail.locator('.run-form button[type="submit"]').click();
      const message = detail.locator('.form-message');
      await expect
        .poll(() => message.textContent(), pagePoll)
        .toContain('the plan is shown above now: read it, then press Run again');
      await detail.locator('.rerun-plan[data-planned="resume"]').waitFor();
    } finally {
      await page.unroute('**/plan');
    }
    const provider = await providerOf('json');
    const stored = await provider.list(provider.resolveLocation(crewRun.location));
    expect(stored).toHaveLength(crewRun.checkpoints.length);
  }, 60_000);
});
