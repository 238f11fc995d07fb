// Does a checkpoint cost the same at the end of a long run as at its start? A whole run on the
// real runtime (offline model, no latency), checkpointing on '*' to SqliteProvider, timing what the
// run pays for every checkpoint (snapshot, redaction, its share of the commit that stored it; see
// cost/checkpoint-timing.ts): the median of each window of 250 checkpoints shows any growth. Two runs of 500 tasks: one crew of 500 tasks, and a flow of 10
// methods that each run a 50-task crew and keep its outputs in the flow state (a flow of long
// crews); each task has the one before it as context. Also what the database holds against the final checkpoint, open (db + WAL) and closed.
// Run with `node --conditions=@crewline/source --import tsx bench/src/checkpoint-growth.ts`
// (`--scenario crew|flow`, `--tasks N`, `--json` for the raw numbers, `--report PATH`). With
// `--compare DIR` (another checkout of the repository, its dependencies installed), each scenario runs
// there and here, one after the other in child processes, and the report puts them side by side.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, defineTool, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { timeCheckpoints } from './cost/checkpoint-timing.js';
import { tenPartFlowClass } from './scenario/ten-part-flow.js';

/** Writes per window of the growth table. */
export const WINDOW = 250;

export interface GrowthResult {
  scenario: 'crew' | 'flow';
  tasks: number;
  checkpoints: number;
  /** Median of what the run paid per checkpoint (see timingWrites) in each window of {@link WINDOW}, in ms. */
  windowMedians: number[];
  medianMs: number;
  /** 99th percentile (nearest rank) of the end-to-end times, in ms. */
  p99Ms: number;
  /** Median and p99 of the provider's own `writeSync` inside those writes, in ms. */
  providerMedianMs: number;
  providerP99Ms: number;
  finalBytes: number;
  openBytes: number;
  closedBytes: number;
  wallMs: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank 99th percentile. */
function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(Math.ceil(sorted.length * 0.99) - 1, 0)] ?? 0;
}

/**
 * Times every checkpoint of every run in this process that a SqliteProvider stores while `body`
 * runs (see cost/checkpoint-timing.ts): what the run pays for each (`endToEnd`: taking it, plus its
 * share of the commit that stored it) and the provider's share alone (`provider`).
 */
async function timingWrites(body: () => Promise<void>): Promise<{ endToEnd: number[]; provider: number[] }> {
  const timing = timeCheckpoints(SqliteProvider.prototype);
  try {
    await body();
  } finally {
    timing.stop();
  }
  const { endToEndMs, providerMs } = timing.times();
  return { endToEnd: endToEndMs, provider: providerMs };
}

type ToolSchema = Parameters<typeof defineTool>[0]['inputSchema'];

/** The runtime's own zod (the bench does not depend on zod), as run-overhead.ts gets it. */
async function runtimeZod(): Promise<{
  z: { object(shape: Record<string, unknown>): ToolSchema; string(): unknown };
}> {
  const runtimeEntry = fileURLToPath(import.meta.resolve('@crewline/runtime'));
  const zodPackage = createRequire(runtimeEntry).resolve('zod/package.json');
  return import(pathToFileURL(join(dirname(zodPackage), 'index.js')).href);
}

const { z } = await runtimeZod();
const notes = defineTool({
  name: 'notes',
  description: 'Looks a subject up in the team notes',
  inputSchema: z.object({ subject: z.string() }),
  execute: (input) => `notes about ${(input as { subject: string }).subject}: three facts and one caveat`,
});

// One tool call at the start of each task's conversation, then a ≈2 KB answer: ≈10 events per task.
const model = offlineModel({
  name: 'growth',
  responseBytes: 2048,
  script: (call) =>
    call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
      ? { toolName: 'notes', input: { subject: 'the task' } }
      : undefined,
});

function crewOf(tasks: number, label: string, checkpoint?: CheckpointConfigInput): Crew {
  const agents = ['Researcher', 'Writer', 'Reviewer'].map(
    (role) =>
      new Agent({
        role,
        goal: `Do the ${role.toLowerCase()} work on {topic}`,
        backstory: 'Experienced',
        llm: model,
        tools: [notes],
      }),
  );
  // Each step extends the one before it, which it gets as context (as pipelines chain their tasks):
  // a context read by scanning the task list once cost a checkpoint more with every task.
  const steps: Task[] = [];
  for (let index = 0; index < tasks; index += 1) {
    const before = steps.at(-1);
    steps.push(
      new Task({
        name: `${label}-step-${index + 1}`,
        description: `Step ${index + 1} of part ${label} of the {topic} report: extend it with new findings`,
        expectedOutput: 'about two kilobytes of notes',
        agent: agents[index % agents.length]!,
        ...(before === undefined ? {} : { context: [before] }),
      }),
    );
  }
  return new Crew({
    name: label,
    agents,
    tasks: steps,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  });
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** One run of `scenario` with `tasks` tasks in all, checkpointing on '*' into a fresh database. */
export async function measureGrowth(scenario: 'crew' | 'flow', tasks: number): Promise<GrowthResult> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-growth-'));
  const location = join(directory, 'run.db');
  const provider = new SqliteProvider();
  // A long lease: without model latency the run rarely yields to the timer that renews it.
  const checkpoint: CheckpointConfigInput = { location, provider, onEvents: ['*'], leaseTtlMs: 3_600_000 };
  try {
    const started = performance.now();
    const { endToEnd: times, provider: providerTimes } = await timingWrites(async () => {
      if (scenario === 'crew') {
        await crewOf(tasks, 'crew', checkpoint).kickoff({ inputs: { topic: 'tides' } });
      } else {
        const ReportFlow = tenPartFlowClass((label) => crewOf(Math.ceil(tasks / 10), label), 'tides');
        await new ReportFlow({ checkpoint }).kickoff();
      }
    });
    const wallMs = performance.now() - started;
    const latest = await provider.latest(location);
    const openBytes = fileSize(location) + fileSize(`${location}-wal`);
    await provider.close();
    const closedBytes = fileSize(location) + fileSize(`${location}-wal`);
    const windowMedians: number[] = [];
    for (let from = 0; from < times.length; from += WINDOW)
      windowMedians.push(median(times.slice(from, from + WINDOW)));
    return {
      scenario,
      tasks,
      checkpoints: times.length,
      windowMedians,
      medianMs: median(times),
      p99Ms: p99(times),
      providerMedianMs: median(providerTimes),
      providerP99Ms: p99(providerTimes),
      finalBytes: latest?.sizeBytes ?? 0,
      openBytes,
      closedBytes,
      wallMs,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export function growthReport(results: readonly GrowthResult[], labels?: readonly string[]): string {
  const windows = Math.max(...results.map((result) => result.windowMedians.length));
  const name = (index: number) => labels?.[index] ?? results[index]!.scenario;
  const lines = [
    '| writes | ' + results.map((_, index) => name(index)).join(' | ') + ' |',
    '| --- | ' + results.map(() => '---').join(' | ') + ' |',
  ];
  for (let window = 0; window < windows; window += 1) {
    const cells = results.map((result) => {
      const value = result.windowMedians[window];
      return value === undefined ? '' : `${value.toFixed(3)} ms`;
    });
    const last = Math.max(...results.map((result) => Math.min((window + 1) * WINDOW, result.checkpoints)));
    lines.push(`| ${window * WINDOW + 1}–${last} | ${cells.join(' | ')} |`);
  }
  const row = (label: string, cell: (result: GrowthResult) => string) =>
    lines.push(`| ${label} | ${results.map(cell).join(' | ')} |`);
  row('median, all writes', (result) => `${result.medianMs.toFixed(3)} ms`);
  row('p99, all writes', (result) => `${result.p99Ms.toFixed(3)} ms`);
  row(
    'provider share median / p99 (its part of the commit that stored it)',
    (result) => `${result.providerMedianMs.toFixed(3)} / ${result.providerP99Ms.toFixed(3)} ms`,
  );
  // The last window may hold a few writes only (the run's end): compare the last full one.
  row('last full window / first', (result) => {
    const full = Math.floor(result.checkpoints / WINDOW);
    return `${(result.windowMedians[Math.max(full - 1, 0)]! / result.windowMedians[0]!).toFixed(2)}×`;
  });
  row('checkpoints', (result) => String(result.checkpoints));
  row('final checkpoint', (result) => `${(result.finalBytes / 1e6).toFixed(2)} MB`);
  row('db + WAL open / final', (result) => `${(result.openBytes / result.finalBytes).toFixed(2)}×`);
  row('db closed / final', (result) => `${(result.closedBytes / result.finalBytes).toFixed(2)}×`);
  row('wall time of the run', (result) => `${(result.wallMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

/** Each figure of several runs of one scenario: its median over the runs. */
export function medianOfRounds(runs: readonly GrowthResult[]): GrowthResult {
  const first = runs[0]!;
  const of = (figure: (result: GrowthResult) => number) => median(runs.map(figure));
  return {
    ...first,
    windowMedians: first.windowMedians.map((_, window) => of((result) => result.windowMedians[window] ?? 0)),
    medianMs: of((result) => result.medianMs),
    p99Ms: of((result) => result.p99Ms),
    providerMedianMs: of((result) => result.providerMedianMs),
    providerP99Ms: of((result) => result.providerP99Ms),
    openBytes: of((result) => result.openBytes),
    closedBytes: of((result) => result.closedBytes),
    wallMs: of((result) => result.wallMs),
  };
}

/** Runs this benchmark for one scenario in the bench directory of the checkout at `root`, in a child process. */
function measureIn(root: string, scenario: string, tasks: string): GrowthResult {
  const output = execFileSync(
    process.execPath,
    [
      '--conditions=@crewline/source',
      '--import',
      'tsx',
      'src/checkpoint-growth.ts',
      '--scenario',
      scenario,
      '--tasks',
      tasks,
      '--json',
    ],
    {
      cwd: join(root, 'bench'),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return (JSON.parse(output.trim().split('\n').at(-1)!) as GrowthResult[])[0]!;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'crew,flow' },
      tasks: { type: 'string', default: '500' },
      json: { type: 'boolean', default: false },
      report: { type: 'string' },
      compare: { type: 'string' },
      rounds: { type: 'string', default: '1' },
    },
  });
  const rounds = Number(values.rounds);
  const scenarios = values.scenario!.split(',') as ('crew' | 'flow')[];
  const results: GrowthResult[] = [];
  const labels: string[] = [];
  const here = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const loadBefore = loadavg()[0]!;
  for (const scenario of scenarios) {
    if (values.compare !== undefined) {
      // Rounds alternate the two checkouts, so a change in the machine's load weighs on both.
      const before: GrowthResult[] = [];
      const after: GrowthResult[] = [];
      for (let round = 0; round < rounds; round += 1) {
        before.push(measureIn(values.compare, scenario, values.tasks!));
        after.push(measureIn(here, scenario, values.tasks!));
      }
      results.push(medianOfRounds(before));
      labels.push(`${scenario}, ${values.compare}`);
      results.push(medianOfRounds(after));
      labels.push(`${scenario}, this checkout`);
    } else {
      const runs: GrowthResult[] = [];
      for (let round = 0; round < rounds; round += 1)
        runs.push(await measureGrowth(scenario, Number(values.tasks)));
      results.push(medianOfRounds(runs));
      labels.push(scenario);
    }
  }
  if (values.json) {
    console.log(JSON.stringify(results));
  } else {
    const report = [
      `# Checkpoint cost over a long run (${values.tasks} tasks, '*' on SqliteProvider)`,
      '',
      `Median of what the run paid per checkpoint (taking it in its event: snapshot, redaction; plus its share of the commit that stored it — SqliteProvider commits the checkpoints between two model or tool calls as one group, a model completion's inside its event; bench/src/cost/checkpoint-timing.ts) per window of ${WINDOW} checkpoints; a crew of ${values.tasks} tasks, and a flow of 10 methods each running a crew of ${Number(values.tasks) / 10} tasks and keeping its outputs in the state; each task has the one before it as context. Offline model without latency, one tool call per task. Machine: ${cpus().length} CPUs, 1-minute load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after (Node ${process.version}).`,
      '',
      growthReport(results, labels),
    ].join('\n');
    console.log(report);
    const reportPath =
      values.report ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'checkpoint-growth.md');
    mkdirSync(dirname(reportPath), { recursive: true });
    writeFileSync(reportPath, `${report}\n`);
  }
}
