/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';

/** What the page shows after a poll: quick on an idle machine, seconds on a loaded one (CI). */
const pagePoll = { timeout: 20_000 };

import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The system's Chromium (Debian's `chromium` package), never a downloaded one; skipped without it
// outside CI, as explorer-browser.test.ts is.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

/** Presses Tab until a node of the graph has the focus; returns its checkpoint id. */
async function tabToNode(page: Page): Promise<string> {
  for (let step = 0; step < 12; step += 1) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() =>
      document.activeElement?.classList.contains('node')
        ? (document.activeElement as HTMLElement).dataset.id
        : undefined,
    );
    if (id !== undefined) return id;
  }
  throw new Error('no node of the graph took the focus after 12 Tabs');
}

describe.skipIf(!haveBrowser && !inCi)(
  'the lineage explorer in Chromium: a location that starts empty, the keyboard, a narrow window',
  () => {
    let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
    let location: string;
    let explorer: RunningExplorer;
    let browser: Browser;
    let page: Page;
    const registry = cliProviderRegistry();
    const pageErrors: Error[] = [];
    // The console stays clean: no 404 for an icon the browser asks for by itself.
    const consoleErrors: string[] = [];

    beforeAll(async () => {
      if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
      directory = await temporaryDirectory('crewline-explorer-page-');
      location = join(directory.path, '.checkpoints');
      await mkdir(location);
      explorer = await startExplorer({
        opened: await openLocation(location, directory.path, registry),
        providers: registry,
        cwd: directory.path,
        pollIntervalMs: 200,
        listIntervalMs: 400,
        command: 'pnpm crewline',
      });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.setDefaultTimeout(10_000);
      page.on('pageerror', (error) => {
        pageErrors.push(error);
      });
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await explorer?.close();
      await registry.close();
      await directory?.remove();
      expect(pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    });

    it('says a location without checkpoints has none yet, and draws the first one written', async () => {
      await page.goto(explorer.url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#live.live');
      const empty = page.locator('#empty');
      expect(await empty.isVisible()).toBe(true);
      expect(await empty.textContent()).toMatch(/^No checkpoints in .*\.checkpoints yet\./);
      const analyst = new Agent({
        role: 'Analyst',
        goal: 'Analyse {topic}',
        backstory: 'Thorough',
        llm: 'offline:page-test',
      });
      const provider = await providerOf('json');
      const crew = new Crew({
        name: 'One-task crew',
        agents: [analyst],
        tasks: [
          new Task({
            name: 'analyse',
            description: 'Analyse {topic}',
            expectedOutput: 'Notes',
            agent: analyst,
          }),
        ],
        checkpoint: { location, provider, onEvents: ['task_completed'] },
      });
      await crew.kickoff({ inputs: { topic: 'rock pools' } });
      await page.waitForSelector('body[data-checkpoints="1"]');
      expect(await empty.isVisible()).toBe(false);
      expect(await page.locator('#status').textContent()).toBe('1 checkpoint, 1 node');
      expect(await page.locator('.group-label').textContent()).toBe('crew One-task crew · 1 checkpoint');
    });

    it('tells, in the Runs panel of a read-only explorer, how to allow runs', async () => {
      await page.locator('nav [data-panel="runs"]').click();
      expect(await page.locator('#runs').textContent()).toContain(
        'read-only: start it with `pnpm crewline checkpoint serve --allow-resume`',
      );
      await page.locator('nav [data-panel="detail"]').click();
    });

    it('opens a node with Enter and compares it with Shift+Enter, the focus staying on it', async () => {
      const id = await tabToNode(page);
      await page.keyboard.press('Enter');
      await page.locator(`.detail[data-checkpoint="${id}"]`).waitFor();
      // Opening redraws the node (it is marked open): the keyboard's place is where it was.
      const focused = () =>
        page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset?.id ?? null);
      expect(await focused()).toBe(id);
      expect(await page.locator(`.node.open[data-id="${id}"]`).count()).toBe(1);
      await page.keyboard.press('Shift+Enter');
      await page.locator('#diff').waitFor();
      expect(await page.locator('#diff').textContent()).toContain(`A: ${id}`);
      expect(await page.locator(`.node.compared[data-id="${id}"]`).count()).toBe(1);
      expect(await focused()).toBe(id);
    });

    it('brings a node reached with Tab into view when a pan had left it outside', async () => {
      const graph = (await page.locator('#graph').boundingBox())!;
      const inView = async () => {
        const node = (await page.locator('.node .shape').first().boundingBox())!;
        return node.x >= graph.x && node.x + node.width <= graph.x + graph.width;
      };
      // Drag the graph right until its node is past the pane's right edge.
      await page.mouse.move(graph.x + 10, graph.y + graph.height - 10);
      await page.mouse.down();
      await page.mouse.move(graph.x + graph.width - 10, graph.y + graph.height - 10, { steps: 5 });
      await page.mouse.up();
      await expect.poll(inView, pagePoll).toBe(false);
      await page.locator('#fit').focus();
      await tabToNode(page);
      await expect.poll(inView, pagePoll).toBe(true);
    });

    it('stacks the graph above the panels in a narrow window, each as wide as the window', async () => {
      await page.setViewportSize({ width: 700, height: 800 });
      const graph = (await page.locator('#graph-pane').boundingBox())!;
      const aside = (await page.locator('aside').boundingBox())!;
      expect(graph.width).toBeGreaterThan(680);
      expect(aside.width).toBeGreaterThan(680);
      expect(aside.y).toBeGreaterThanOrEqual(graph.y + graph.height - 1);
      // The page itself does not scroll sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(700);
    });

    // The trial: a crew without a name (the runtime calls it "crew") was shown as "crew crew".
    it('names a crew without a name once, in its group label and its detail', async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      const clerk = new Agent({ role: 'Clerk', goal: 'File', backstory: 'Tidy', llm: 'offline:page-test' });
      const crew = new Crew({
        agents: [clerk],
        tasks: [new Task({ description: 'File it', expectedOutput: 'A line', agent: clerk })],
        checkpoint: { location, provider: await providerOf('json'), onEvents: ['task_completed'] },
      });
      await crew.kickoff({});
      await page.waitForSelector('body[data-checkpoints="2"]');
      const labels = await page.locator('.group-label').allTextContents();
      expect(labels).toContain('crew · 1 checkpoint');
      expect(labels.join('\n')).not.toContain('crew crew');
      const [written] = await (await providerOf('json'))
        .list(location, { branch: 'main' })
        .then((all) => all.filter((checkpoint) => checkpoint.entities[0]?.name === 'crew'));
      await page.locator(`.node[data-id="${written!.id}"]`).click();
      await page.locator(`.detail[data-checkpoint="${written!.id}"]`).waitFor();
      // The heading is the label, then the status badge.
      const heading = await page.locator('.detail .entity h3').first().textContent();
      expect(heading).toMatch(/^crew/);
      expect(heading).not.toContain('crew crew');
    });
  },
);
