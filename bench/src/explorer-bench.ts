// The lineage explorer (`crewline checkpoint serve`) over 10,000 SQLite checkpoints, in the system's
// headless Chromium: time to the first drawn graph, frame times while panning and zooming, and the
// time to expand a collapsed node. Run alone: pnpm --filter @crewline/bench bench:explorer
/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { Browser } from 'playwright-core';
// The explorer is not part of @crewline/cli's public entry: the bench starts it from its source.
import { openLocation } from '../../packages/cli/src/core/open-location.js';
import { cliProviderRegistry } from '../../packages/cli/src/core/providers.js';
import { startExplorer } from '../../packages/cli/src/serve/explorer-server.js';
import { formatMs, markdownTable, percentile } from './bench-statistics.js';
import { layoutCandidates } from './explorer-layout-candidates.js';
import {
  expand,
  type FirstRender,
  type FrameSummary,
  loadPage,
  pan,
  recordFrames,
  timeGraphRequests,
  viewport,
  zoom,
} from './explorer-page-driver.js';
import { createCrew50Run } from './scenario/crew-50.js';

export interface ExplorerBenchOptions {
  /** Checkpoints in the database. Default 10,000. */
  checkpoints?: number;
  /** Measured page loads (after one warm-up load). Default 7. */
  loads?: number;
  /** How long each pan or zoom gesture is driven, in ms. Default 2,000. */
  gestureMs?: number;
  /** Collapsed nodes expanded one after the other. Default 5. */
  expansions?: number;
  /** Chromium to drive. Default `CHROMIUM_PATH`, else `/usr/bin/chromium` (Debian's package). */
  chromiumPath?: string;
  /** Where the markdown report is written. Default `bench/results/explorer.md`. */
  reportPath?: string;
  /** Where the screenshot of the graph is written. Default `docs/images/explorer-graph.png`. */
  screenshotPath?: string;
}

/** Where the task_completed checkpoints of main are, so forks start from a finished task. */
interface WrittenRun {
  branch: string;
  written: number;
  /** Checkpoint id after task N completed, by N (1-based). */
  afterTask: Map<number, string>;
}

/**
 * Writes `total` checkpoints the way a team exploring one crew would: the crew-50 run on `main`
 * with `'*'` (500 checkpoints, ten per task), then "what if" forks from the checkpoint after some
 * task completed — each re-running the tasks after it with its own outputs, every fifth one a fork
 * of the fork before it — until the database holds `total`; the last fork is cut short, as an
 * interrupted run is.
 */
async function writeLineage(provider: SqliteProvider, location: string, total: number) {
  let written = 0;
  const runs: WrittenRun[] = [];
  const play = async (options: {
    branch: string;
    seed: number;
    completedTasks?: number;
    forkedFrom?: string;
  }) => {
    const run = createCrew50Run({ ...options, provider, location });
    const record: WrittenRun = { branch: options.branch, written: 0, afterTask: new Map() };
    let completed = options.completedTasks ?? 0;
    await run.play((trigger) => {
      if (written >= total) return;
      run.state.writeCheckpointSync({ trigger });
      written += 1;
      record.written += 1;
      if (trigger === 'task_completed') {
        completed += 1;
        record.afterTask.set(completed, run.state.lineage.checkpointId!);
      }
    });
    runs.push(record);
    return record;
  };
  const main = await play({ branch: 'main', seed: 1 });
  // Fork points (tasks completed on the parent) cycle through the run, early and late.
  const forkAfter = [10, 25, 40, 5, 30, 45, 15, 35, 20, 1, 48, 12];
  let previous = main;
  for (let fork = 1; written < total; fork += 1) {
    const task = forkAfter[(fork - 1) % forkAfter.length]!;
    const ofPrevious = fork % 5 === 0 && previous.afterTask.has(task);
    const parent = ofPrevious ? previous : main;
    previous = await play({
      branch: ofPrevious ? `${parent.branch}/what-if-${fork}` : `what-if-${fork}`,
      seed: fork + 1,
      completedTasks: task,
      forkedFrom: parent.afterTask.get(task)!,
    });
  }
  return runs;
}

function describeMachine(): string {
  const processors = cpus();
  return `${processors.length} × ${processors[0]?.model.trim() ?? 'unknown CPU'}`;
}

/** Measures the explorer page over a 10,000-checkpoint SQLite database; writes bench/results/explorer.md. */
export async function runExplorerBench(options: ExplorerBenchOptions = {}): Promise<string> {
  const total = options.checkpoints ?? 10_000;
  const loads = options.loads ?? 7;
  const gestureMs = options.gestureMs ?? 2000;
  const expansions = options.expansions ?? 5;
  const chromiumPath = options.chromiumPath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `[bench] no Chromium at ${chromiumPath}; install Debian's chromium package or set CHROMIUM_PATH`,
    );
  }
  const directory = mkdtempSync(join(tmpdir(), 'crewline-explorer-bench-'));
  const location = join(directory, 'checkpoints.db');
  const registry = cliProviderRegistry();
  let browser: Browser | undefined;
  let explorer: Awaited<ReturnType<typeof startExplorer>> | undefined;
  try {
    const loadBefore = loadavg()[0]!;
    const generation = performance.now();
    const provider = new SqliteProvider();
    const runs = await writeLineage(provider, location, total);
    const generationMs = performance.now() - generation;
    const listing = await provider.list(location);
    await provider.close?.();
    const databaseBytes = statSync(location).size;
    console.log(
      `wrote ${total} checkpoints (${runs.length} runs on ${runs.length} branches) in ${formatMs(generationMs)} ms`,
    );

    explorer = await startExplorer({
      opened: await openLocation(location, directory, registry),
      providers: registry,
      cwd: directory,
    });
    const layouts = await layoutCandidates(listing);
    const server = await timeGraphRequests(explorer.url, loads);

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });

    // A warm-up load (the server's listing, the browser's caches of the page's modules), then fresh pages.
    await (await loadPage(browser, explorer.url)).page.close();
    const firstRenders: FirstRender[] = [];
    for (let load = 0; load < loads; load += 1) {
      const { page, first } = await loadPage(browser, explorer.url);
      firstRenders.push(first);
      await page.close();
    }

    const { page } = await loadPage(browser, explorer.url);
    const graph = await page.evaluate(() => ({
      status: document.getElementById('status')?.textContent ?? '',
      nodes: document.querySelectorAll('#graph .node').length,
      elements: document.querySelectorAll('#graph *').length,
    }));
    const screenshotPath =
      options.screenshotPath ??
      fileURLToPath(new URL('../../docs/images/explorer-graph.png', import.meta.url));
    mkdirSync(dirname(screenshotPath), { recursive: true });
    // Four wheel steps out (1.15⁴ ≈ 1.7×) around the top left corner, where the text is still drawn:
    // more of the lanes and forks in one picture.
    const frame = () =>
      page.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
      );
    const corner = await page.locator('#graph').boundingBox();
    if (!corner) throw new Error('the graph is not on the page');
    await page.mouse.move(corner.x + 2, corner.y + 2);
    for (let step = 0; step < 4; step += 1) await page.mouse.wheel(0, 100);
    await frame();
    await page.screenshot({ path: screenshotPath });
    for (let step = 0; step < 4; step += 1) await page.mouse.wheel(0, -100);
    await frame();

    const gestures: FrameSummary[] = [];
    gestures.push(await recordFrames(page, 'pan (drag) at 1:1', () => pan(page, gestureMs)));
    gestures.push(await recordFrames(page, 'zoom (wheel) out to ≈9× and back', () => zoom(page, gestureMs)));
    await page.click('#fit');
    // The whole graph is too small for text: each lane is drawn as an overview.
    await page.waitForFunction(() => document.querySelector('#graph .overview') !== null);
    const whole = await page.evaluate(() => document.querySelectorAll('#graph *').length);
    gestures.push(await recordFrames(page, 'pan (drag), whole graph in view', () => pan(page, gestureMs)));
    await page.close();

    // Collapsed nodes spread over the lanes of a fresh page at 1:1, expanded one after the other
    // (each redraw keeps the last).
    const { page: expanding } = await loadPage(browser, explorer.url);
    // Each is picked among the collapsed nodes drawn at that moment: an expansion moves the nodes
    // right of it (and the forks from them) along.
    const expanded: { milliseconds: number; nodesBefore: number; nodesAfter: number }[] = [];
    for (let round = 0; round < expansions; round += 1) {
      const key = await expanding.evaluate(
        ([index, count]) => {
          const collapsed = Array.from(document.querySelectorAll<SVGGElement>('#graph .node.collapsed'));
          const step = Math.max(1, Math.floor(collapsed.length / count));
          return collapsed[Math.min(collapsed.length - 1, index * step)]?.dataset.key;
        },
        [round, expansions] as const,
      );
      if (key === undefined) break;
      expanded.push(await expand(expanding, key));
    }
    const loadAfter = loadavg()[0]!;
    const browserVersion = browser.version();

    const sorted = (values: number[]) => [...values].sort((left, right) => left - right);
    const medianOf = (values: number[]) => percentile(sorted(values), 0.5);
    const maxOf = (values: number[]) => Math.max(...values);
    const firstRows = [
      ['navigation → graph painted', firstRenders.map((first) => first.painted)],
      ['navigation → graph nodes in the document', firstRenders.map((first) => first.drawn)],
      [
        '`/api/graph` request (from the graph cache after the warm-up load, transfer)',
        firstRenders.map((first) => first.graphRequest),
      ],
    ] as const;
    const report = [
      `# Lineage explorer over ${total.toLocaleString('en-US')} SQLite checkpoints`,
      '',
      `Generated by \`bench/src/explorer-bench.ts\` (\`pnpm --filter @crewline/bench bench:explorer\`) on ${new Date().toISOString()}.`,
      `Machine: ${describeMachine()}, Node ${process.version}, ${process.platform}; Chromium ${browserVersion} (\`${chromiumPath}\`, headless), viewport ${viewport.width}×${viewport.height}.`,
      `Load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after: the machine is shared, so read the figures as upper bounds.`,
      '',
      `**Data.** ${total} checkpoints in one SQLite database (${(databaseBytes / 1024 / 1024).toFixed(1)} MiB), written in ${formatMs(generationMs / 1000)} s:`,
      `the crew-50 run on \`main\` with \`'*'\` (500 checkpoints, ten per task), then ${runs.length - 1} "what if" forks`,
      'from the checkpoint after a task completed, each re-running the tasks after it (every fifth a fork of',
      'the fork before it; the last one cut short). The page shows',
      `${graph.status} (consecutive checkpoints of one task collapse into a ×N node); it keeps only`,
      'what lies around the view in the document, and draws each lane as an overview (its line, its nodes',
      'as one dotted path, its head) when zoomed too far out for text:',
      `${graph.nodes} nodes, ${graph.elements} SVG elements in the first view; ${whole} SVG elements with the whole graph in view.`,
      '',
      `**First render**: ${loads} fresh page loads after one warm-up, times from navigation start in the page's`,
      'clock; "painted" is when a task queued from the requestAnimationFrame after the nodes were inserted',
      'runs, i.e. after that frame was painted.',
      '',
      markdownTable(
        ['first render', 'median ms', 'max ms'],
        firstRows.map(([name, values]) => [
          name,
          formatMs(medianOf([...values])),
          formatMs(maxOf([...values])),
        ]),
      ),
      '',
      `\`/api/graph\` body: ${(firstRenders[0]!.graphBytes / 1024).toFixed(0)} KiB of JSON.`,
      '',
      `**Panning and zooming**: input driven through Chromium's input pipeline (Playwright mouse moves and`,
      `wheel events, one after another) for ${gestureMs / 1000} s each, while the page records every`,
      `requestAnimationFrame interval. A frame of k × 16.7 ms counts k − 1 dropped frames.`,
      '',
      markdownTable(
        ['gesture', 'frames', 'median frame ms', 'p95 frame ms', 'max frame ms', 'dropped frames'],
        gestures.map((gesture) => [
          gesture.gesture,
          String(gesture.frames),
          formatMs(gesture.median),
          formatMs(gesture.p95),
          formatMs(gesture.max),
          String(gesture.dropped),
        ]),
      ),
      '',
      `**Expanding a collapsed node**: click on a ×N node → its checkpoints drawn one by one and painted`,
      `(a new \`/api/graph?expand=…\` request and a redraw), ${expanded.length} nodes one after the other.`,
      '',
      markdownTable(
        ['action', 'median ms', 'max ms', 'nodes drawn before → after (last)'],
        [
          [
            'expand a collapsed node',
            formatMs(medianOf(expanded.map((entry) => entry.milliseconds))),
            formatMs(maxOf(expanded.map((entry) => entry.milliseconds))),
            `${expanded.at(-1)?.nodesBefore ?? 0} → ${expanded.at(-1)?.nodesAfter ?? 0}`,
          ],
        ],
      ),
      '',
      `**\`/api/graph\` on the server** (requested from Node, no page open): the first request lists the`,
      'location, lays it out and serializes it; the same request again is answered from the graph cache',
      "(keyed by the listing's fingerprint and the expanded nodes); expanding another node lays the listing",
      `out again. ${loads} requests each after the first.`,
      '',
      markdownTable(
        ['request', 'median ms', 'max ms'],
        [
          ['first (listing, layout, JSON)', formatMs(server.first), formatMs(server.first)],
          ['the same again (graph cache)', formatMs(medianOf(server.cached)), formatMs(maxOf(server.cached))],
          [
            'another node expanded (layout, JSON)',
            formatMs(medianOf(server.expanded)),
            formatMs(maxOf(server.expanded)),
          ],
        ],
      ),
      '',
      layouts,
      '',
      `Screenshot (the first view, four wheel steps out): [\`docs/images/explorer-graph.png\`](../../docs/images/explorer-graph.png).`,
      '',
    ].join('\n');
    const reportPath =
      options.reportPath ?? fileURLToPath(new URL('../results/explorer.md', import.meta.url));
    mkdirSync(dirname(reportPath), { recursive: true });
    writeFileSync(reportPath, report);
    console.log(report);
    return report;
  } finally {
    await browser?.close();
    await explorer?.close();
    await registry.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runExplorerBench();
