import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The system's Chromium (Debian's `chromium` package), never a downloaded one.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
/** What the page shows after a poll: quick on an idle machine, seconds on a loaded one (CI). */
const pagePoll = { timeout: 20_000 };
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
if (!haveBrowser && !inCi) {
  console.warn(
    `explorer browser test skipped: no Chromium at ${chromiumPath}; install Debian's chromium or set CHROMIUM_PATH to enable it`,
  );
}
// Kept by CI as an artifact: one screenshot per step of the proof.
const screenshots = fileURLToPath(new URL('../../test-output/explorer/', import.meta.url));
// The tutorial app (apps/tutorial): its demo writes the checkpoints, and its crewline.config.ts maps
// the model id they store to the tutorial's offline model, whose delay per call the page can watch.
const tutorialDirectory = fileURLToPath(new URL('../../../../apps/tutorial/', import.meta.url));
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const editedResearch = '**Edited** research: tide pools <script>alert(1)</script>';

/** Runs the tutorial's demo as `pnpm demo …` does, typed in `base`; rejects unless it exits 0. */
function runDemo(args: string[], base: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@crewline/source',
        '--import',
        tsxLoader,
        join(tutorialDirectory, 'src/main.ts'),
        ...args,
      ],
      {
        cwd: base,
        env: { ...process.env, INIT_CWD: base, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`demo ${args.join(' ')} exited ${code}: ${output}`)),
    );
  });
}

describe.skipIf(!haveBrowser && !inCi)(
  "the lineage explorer in Chromium, over the tutorial's checkpoints",
  () => {
    let project: Awaited<ReturnType<typeof temporaryDirectory>>;
    let location: string;
    let main: StoredCheckpoint[];
    let midTaskId: string | undefined;
    let explorer: RunningExplorer;
    let browser: Browser;
    let page: Page;
    const registry = cliProviderRegistry();
    const pageErrors: Error[] = [];
    const dialogs: string[] = [];
    const latencyBefore = process.env.CREWLINE_TUTORIAL_LATENCY_MS;
    const shot = (name: string) => page.screenshot({ path: `${screenshots}${name}.png`, fullPage: true });

    beforeAll(async () => {
      if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
      await rm(screenshots, { recursive: true, force: true });
      await mkdir(screenshots, { recursive: true });
      project = await temporaryDirectory('crewline-explorer-');
      location = join(project.path, '.checkpoints.db');
      // The tutorial end to end: a run, then a fork of its first checkpoint with edited research.
      await runDemo(['--offline', '--latency', '0', '--sqlite', '--location', location], project.path);
      const opened = await openLocation(location, project.path, registry);
      main = await opened.provider.list(opened.location, { branch: 'main' });
      expect(main).toHaveLength(2);
      await runDemo(
        [
          '--offline',
          '--latency',
          '0',
          '--sqlite',
          '--location',
          location,
          '--fork',
          `${location}#${main[0]!.id}`,
          '--branch',
          'experiment',
          '--edit-research',
          editedResearch,
        ],
        project.path,
      );
      // Runs started from the page load the tutorial's crewline.config.ts, so the Writer takes this
      // long per call: long enough to see the run in progress.
      process.env.CREWLINE_TUTORIAL_LATENCY_MS = '1500';
      explorer = await startExplorer({
        opened,
        providers: registry,
        cwd: tutorialDirectory,
        allowResume: true,
        pollIntervalMs: 200,
        listIntervalMs: 400,
      });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
      page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
      // 20 s, not 10: on a loaded machine (a CI run beside other work) a click on the fork's Run
      // button waited over 10 s for the page to take it.
      page.setDefaultTimeout(20_000);
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on('pageerror', (error) => {
        pageErrors.push(error);
      });
    }, 90_000);
    afterAll(async () => {
      if (latencyBefore === undefined) delete process.env.CREWLINE_TUTORIAL_LATENCY_MS;
      else process.env.CREWLINE_TUTORIAL_LATENCY_MS = latencyBefore;
      await browser?.close();
      await explorer?.close();
      await registry.close();
      await project?.remove();
      expect(pageErrors).toEqual([]);
      expect(dialogs).toEqual([]);
    });

    it('1. opens the checkpoints and draws both branches, the fork from the checkpoint it came from', async () => {
      await page.goto(explorer.url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#live.live');
      expect(await page.locator('.lane-label[data-branch="main"]').count()).toBe(1);
      expect(await page.locator('.lane-label[data-branch="experiment"]').count()).toBe(1);
      expect(await page.locator('.node[data-branch="main"]').count()).toBe(2);
      // The fork re-ran the Writer after the edited research: one checkpoint.
      expect(await page.locator('.node[data-branch="experiment"]').count()).toBe(1);
      expect(await page.locator('path.edge.fork').count()).toBe(1);
      expect(await page.locator('.node.head').count()).toBe(2);
      // The token is kept by the page, not in the address bar.
      expect(page.url()).not.toContain('token');
      await shot('1-both-branches');
    });

    it('2. opens a node: tasks with whole outputs as Markdown, inputs, tokens and cost, the event timeline with payloads', async () => {
      const node = page.locator('.node[data-branch="experiment"]').first();
      const id = await node.getAttribute('data-id');
      await node.click();
      const detail = page.locator(`.detail[data-checkpoint="${id}"]`);
      await detail.waitFor();
      expect(await detail.locator('.task').count()).toBe(2);
      const research = detail.locator('.task[data-task="1"] .output');
      // Markdown rendered, the HTML in the output shown as text and never run.
      expect(await research.locator('strong').first().textContent()).toBe('Edited');
      expect(await research.textContent()).toContain('<script>alert(1)</script>');
      expect(await page.locator('.output script').count()).toBe(0);
      expect(await detail.locator('.task[data-task="1"] .badge.edited').count()).toBe(1);
      expect(await detail.locator('.task[data-task="2"] .output').textContent()).toContain('Edited');
      expect(await detail.locator('table.inputs').textContent()).toContain('AI agents');
      const summary = await detail.locator('table.summary').textContent();
      expect(summary).toMatch(/Tokens\d+ \(\d+ in, \d+ out/);
      expect(summary).toContain('$0 (offline model)');
      // The fork's history carries the research call of the run it came from: shown apart (trial #11).
      expect(summary).toMatch(
        /Inherited\$0 \(offline model\): the calls of the checkpoint this branch was forked from \(\S+\), not counted aboveoffline:tutorial: 1 call, /,
      );
      const events = detail.locator('.timeline li');
      expect(await events.count()).toBeGreaterThan(3);
      const completed = detail.locator('.timeline li.type-task_completed').last();
      await completed.locator('summary').click();
      await expect
        .poll(() => completed.locator('.payload').textContent())
        .toContain('"type": "task_completed"');
      await shot('2-detail');
    });

    it('3. selects two nodes and reads their diff side by side', async () => {
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
      expect(
        await research.locator('tr.changed td.right, tr.added td.right').first().textContent(),
      ).toContain('Edited');
      await shot('3-diff');
    });

    it('4. edits the research output and sees which later tasks will run again', async () => {
      // The end of the run on main: both tasks completed.
      await page.locator(`.node[data-id="${main[1]!.id}"]`).click();
      const detail = page.locator(`.detail[data-checkpoint="${main[1]!.id}"]`);
      await detail.waitFor();
      // Before any edit nothing would run.
      await expect.poll(() => detail.locator('.rerun-plan').textContent(), pagePoll).toContain('nothing');
      await detail.locator('select[name="mode"]').selectOption('fork');
      await detail.locator('input[name="branch"]').fill('from-browser');
      await detail.locator('.run-form details summary').first().click();
      await detail.locator('textarea[data-output="1"]').fill('Research written in the browser: tide pools.');
      await detail.locator('.rerun-plan li.reason-invalidated[data-task="2"]').waitFor();
      expect(await detail.locator('.rerun-plan').textContent()).toContain('an earlier output was edited');
      // The edit is on the page only: the stored checkpoint is unchanged until the run starts.
      expect(await page.locator('.node[data-branch="from-browser"]').count()).toBe(0);
      await shot('4-edited-will-run-again');
    });

    it('5. forks, watches the new branch appear while the run goes on, and sees it finish', async () => {
      const detail = page.locator(`.detail[data-checkpoint="${main[1]!.id}"]`);
      await detail.locator('.rerun-plan[data-planned="fork"]').waitFor();
      await detail.locator('button[type="submit"]').click();
      const run = page.locator('#runs .run').first();
      await run.locator('.badge.status-running').waitFor();
      // Before its first checkpoint (the tutorial writes one when a task completes, and the Writer
      // takes 1.5 s), the run shows on the graph as a ring on the checkpoint it continues, and its
      // newest progress line in the header.
      await expect
        .poll(() => page.locator('#activity').textContent(), pagePoll)
        .toContain('task 2 write started');
      expect(await page.locator('#activity').isVisible()).toBe(true);
      expect(await page.locator('.node[data-branch="from-browser"]').count()).toBe(0);
      expect(await page.locator(`.node.continuing[data-id="${main[1]!.id}"] .continuing-ring`).count()).toBe(
        1,
      );
      await shot('5-fork-running');
      await page.locator('.lane-label[data-branch="from-browser"]').waitFor({ timeout: 30_000 });
      expect(await page.locator('.node[data-branch="from-browser"]').count()).toBe(1);
      // The new lane is drawn right of what the view showed: the view moves to it, no "fit" needed.
      const inView = async () => {
        const graph = (await page.locator('#graph').boundingBox())!;
        const node = await page.locator('.node[data-branch="from-browser"] .shape').boundingBox();
        return (
          node !== null &&
          node.x >= graph.x &&
          node.y >= graph.y &&
          node.x + node.width <= graph.x + graph.width &&
          node.y + node.height <= graph.y + graph.height
        );
      };
      await expect.poll(inView, pagePoll).toBe(true);
      await shot('6-new-branch-on-graph');
      await page.locator('#runs .run.status-finished').waitFor({ timeout: 30_000 });
      expect(await page.locator('#runs .run .lines').textContent()).toMatch(/task 2 write completed/);
      // Finished: the header's note and the ring are gone.
      await page.locator('#activity').waitFor({ state: 'hidden' });
      expect(await page.locator('.node.continuing').count()).toBe(0);
      await shot('7-run-finished');
      const opened = await openLocation(location, project.path, registry);
      const forked = await opened.provider.list(opened.location, { branch: 'from-browser' });
      expect(forked).toHaveLength(1);
      expect(forked[0]!.parentId).toBe(main[1]!.id);
    }, 90_000);

    it('6. shows the conversation of a task in progress, written by another writer while the page is open, and what a changed input costs it', async () => {
      const provider = await providerOf('sqlite');
      const analyst = new Agent({
        role: 'Analyst',
        goal: 'Analyse {topic}',
        backstory: 'Thorough',
        llm: 'offline:browser-test',
      });
      const crew = new Crew({
        name: 'Mid-task crew',
        agents: [analyst],
        tasks: [
          new Task({
            name: 'analyse',
            description: 'Analyse {topic}',
            expectedOutput: 'Notes',
            agent: analyst,
          }),
        ],
        // Written after the model answered and before the task completed: the task is in progress.
        checkpoint: { location, provider, onEvents: ['llm_call_completed'] },
      });
      await crew.kickoff({ inputs: { topic: 'rock pools' } });
      const [midTask] = await provider
        .list(provider.resolveLocation(location), { branch: 'main' })
        .then((all) => all.filter((checkpoint) => checkpoint.trigger === 'llm_call_completed'));
      await provider.close?.();
      expect(midTask).toBeDefined();
      midTaskId = midTask!.id;
      await page.waitForSelector('body[data-checkpoints="5"]');
      await page.locator('#fit').click();
      await page.locator(`.node[data-id="${midTask!.id}"]`).click();
      const detail = page.locator(`.detail[data-checkpoint="${midTask!.id}"]`);
      await detail.waitFor();
      const task = detail.locator('.task[data-task="1"]');
      expect(await task.locator('.badge').first().textContent()).toBe('running');
      await task.locator('.conversation summary').click();
      expect(await task.locator('.conversation summary').textContent()).toMatch(
        /messages?, 1 model call, \d+ tokens/,
      );
      expect(await task.locator('.message.role-user pre').first().textContent()).toContain('rock pools');
      expect(await task.locator('.message.role-assistant').count()).toBe(1);
      await shot('8-conversation-in-progress');
      // Continued as it is, the task goes on from its saved conversation; a changed input starts it
      // over, and the plan says so (with the call it had made) before anything runs.
      const plan = detail.locator('.rerun-plan');
      await plan.locator('li.reason-continued[data-task="1"]').waitFor();
      await detail.locator('textarea[data-input="topic"]').fill('kelp forests');
      await plan.locator('li.reason-restarted[data-task="1"]').waitFor();
      expect(await plan.textContent()).toContain(
        'starts over with the new inputs; the 1 model call it had made is made again',
      );
    });

    it('7. renders the Markdown models write: pipe tables with their alignment, numbered lists from their number, never HTML', async () => {
      const text = [
        '| option | cost |',
        '|:--|--:|',
        '| **keep** | 1 |',
        '| a \\| b | 22 |',
        '',
        '3. third',
        '4. fourth',
        '',
        'not | a table',
        '---',
        '',
        '<img src=x onerror=alert(1)>',
      ].join('\n');
      // A string, so that the test's own bundler leaves the page's dynamic import alone.
      const rendered = (await page.evaluate(`(async () => {
        const { renderMarkdown } = await import('/assets/markdown.js');
        const root = renderMarkdown(${JSON.stringify(text)});
        const cells = [...root.querySelectorAll('table td')];
        return {
          headers: [...root.querySelectorAll('table th')].map((cell) => cell.textContent),
          cells: cells.map((cell) => cell.textContent),
          bold: root.querySelector('table td strong')?.textContent,
          alignments: cells.slice(0, 2).map((cell) => cell.style.textAlign),
          tables: root.querySelectorAll('table').length,
          start: root.querySelector('ol')?.getAttribute('start'),
          images: root.querySelectorAll('img').length,
          text: root.textContent,
        };
      })()`)) as Record<string, unknown>;
      expect(rendered).toMatchObject({
        headers: ['option', 'cost'],
        cells: ['keep', '1', 'a | b', '22'],
        bold: 'keep',
        alignments: ['left', 'right'],
        tables: 1,
        start: '3',
        images: 0,
      });
      expect(rendered.text).toContain('<img src=x onerror=alert(1)>');
    });

    it('8. drops a checkpoint another process deleted, and the open detail says it is gone', async () => {
      expect(midTaskId).toBeDefined();
      // Open it again (step 7 left the page as it was) and delete it behind the page's back.
      await page.locator(`.node[data-id="${midTaskId}"]`).click();
      await page.locator(`.detail[data-checkpoint="${midTaskId}"]`).waitFor();
      const provider = await providerOf('sqlite');
      expect(await provider.delete(provider.resolveLocation(location), midTaskId!)).toBe(true);
      await provider.close?.();
      await page.locator('#detail .removed').waitFor();
      expect(await page.locator('#detail .removed').textContent()).toContain(midTaskId);
      await page.waitForSelector('body[data-checkpoints="4"]');
      expect(await page.locator(`.node[data-id="${midTaskId}"]`).count()).toBe(0);
      await shot('9-deleted-elsewhere');
    });
  },
);
