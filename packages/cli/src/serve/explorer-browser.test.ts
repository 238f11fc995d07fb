import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The system's Chromium (Debian's `chromium` package), never a downloaded one.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
if (!haveBrowser && !inCi) {
  console.warn(
    `explorer browser test skipped: no Chromium at ${chromiumPath}; install Debian's chromium or set CHROMIUM_PATH to enable it`,
  );
}
const screenshots = fileURLToPath(new URL('../../test-output/explorer/', import.meta.url));

describe.skipIf(!haveBrowser && !inCi)('the lineage explorer in Chromium', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: CrewRun;
  let explorer: RunningExplorer;
  let browser: Browser;
  let page: Page;
  const registry = cliProviderRegistry();
  const shot = (name: string) => page.screenshot({ path: `${screenshots}${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    await rm(screenshots, { recursive: true, force: true });
    await mkdir(screenshots, { recursive: true });
    project = await temporaryDirectory('crewline-explorer-');
    run = await writeCrewRun('sqlite', project.path);
    const forked = await runCommand(
      [
        'checkpoint',
        'fork',
        run.checkpoints[0]!.id,
        '--location',
        run.location,
        '--branch',
        'experiment',
        '--set-output',
        '1=**Edited** research: tide pools <script>alert(1)</script>',
        '--quiet',
      ],
      { cwd: project.path },
    );
    expect(forked.stderr).toBe('');
    expect(forked.code).toBe(0);
    explorer = await startExplorer({
      opened: await openLocation(run.location, project.path, registry),
      providers: registry,
      cwd: project.path,
      allowResume: true,
      pollIntervalMs: 200,
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    page.setDefaultTimeout(10_000);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => {
      throw error;
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await explorer?.close();
    await run?.close();
    await registry.close();
    await project?.remove();
  });

  it('draws both branches, the fork from the checkpoint it came from', async () => {
    await page.goto(explorer.url);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#live.live');
    expect(await page.locator('.lane-label[data-branch="main"]').count()).toBe(1);
    expect(await page.locator('.lane-label[data-branch="experiment"]').count()).toBe(1);
    expect(await page.locator('.node[data-branch="main"]').count()).toBe(3);
    // The fork re-ran tasks 2 and 3 after the edited first output.
    expect(await page.locator('.node[data-branch="experiment"]').count()).toBe(2);
    expect(await page.locator('path.edge.fork').count()).toBe(1);
    expect(await page.locator('.node.head').count()).toBe(2);
    // The token is kept by the page, not in the address bar.
    expect(page.url()).not.toContain('token');
    await shot('1-graph');
  });

  it('opens a checkpoint: tasks with outputs as Markdown, inputs, events, tokens', async () => {
    const first = page.locator('.node[data-branch="experiment"]').first();
    const id = await first.getAttribute('data-id');
    await first.click();
    const detail = page.locator(`.detail[data-checkpoint="${id}"]`);
    await detail.waitFor();
    expect(await detail.locator('.task').count()).toBe(3);
    const edited = detail.locator('.task[data-task="1"] .output');
    // Markdown rendered, the HTML in the output shown as text and never run.
    expect(await edited.locator('strong').first().textContent()).toBe('Edited');
    expect(await edited.textContent()).toContain('<script>alert(1)</script>');
    expect(await page.locator('.output script').count()).toBe(0);
    expect(await detail.locator('.task[data-task="1"] .badge.edited').count()).toBe(1);
    expect(await detail.locator('table.inputs').textContent()).toContain('tide pools');
    expect(await detail.locator('.timeline li').count()).toBeGreaterThan(3);
    expect(await detail.locator('table.summary').textContent()).toContain('Tokens');
    await shot('2-detail');
  });

  it('compares a checkpoint of each branch side by side', async () => {
    await page
      .locator('.node[data-branch="main"]')
      .last()
      .click({ modifiers: ['Shift'] });
    await page
      .locator('.node[data-branch="experiment"]')
      .last()
      .click({ modifiers: ['Shift'] });
    const diff = page.locator('#diff .diff');
    await diff.waitFor();
    expect(await diff.locator('table.fields').textContent()).toContain('experiment');
    const research = diff.locator('.task-change[data-task="1"]');
    expect(await research.locator('td.left').first().textContent()).not.toBe('');
    expect(await research.locator('tr.changed td.right, tr.added td.right').first().textContent()).toContain(
      'Edited',
    );
    await shot('3-diff');
  });

  it('edits an output, forks, and shows the new branch live as its checkpoints are written', async () => {
    const second = page.locator('.node[data-branch="main"]').nth(1);
    const id = await second.getAttribute('data-id');
    await second.click();
    const detail = page.locator(`.detail[data-checkpoint="${id}"]`);
    await detail.waitFor();
    await detail.locator('select[name="mode"]').selectOption('fork');
    await detail.locator('input[name="branch"]').fill('from-browser');
    await detail.locator('details summary').nth(1).click();
    await detail.locator('textarea[data-output="2"]').fill('An outline written in the browser');
    await detail.locator('button[type="submit"]').click();
    await page.locator('#runs .run.status-finished').waitFor({ timeout: 30_000 });
    await page.locator('.lane-label[data-branch="from-browser"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('.node[data-branch="from-browser"]').count()).toBe(1);
    expect(await page.locator('#runs .run .lines').textContent()).toMatch(/task 3 write completed/);
    await shot('4-forked-live');
    const listed = await runCommand(
      ['checkpoint', 'list', run.location, '--branch', 'from-browser', '--json'],
      { cwd: project.path },
    );
    expect((JSON.parse(listed.stdout) as { count: number }).count).toBe(1);
  });
});
