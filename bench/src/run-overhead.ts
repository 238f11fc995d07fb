// Run overhead of checkpointing (SPEC §8): crew-50 — 3 agents, 50 tasks, ≈2 KB outputs, one tool call
// per task (≈10 events per task) — checkpointing on '*' to SqliteProvider, against the same run with
// checkpointing off, in the same process, interleaved, median of several runs each.
// The offline model waits `latencyMs` per call to stand in for a (very fast) real model; a real model
// takes hundreds of milliseconds to seconds per call, which only makes the ratio smaller.
// Run alone with `node --conditions=@crewline/source --import tsx bench/src/run-overhead.ts`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, defineTool, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { CheckpointConfigInput, CheckpointProvider } from '@crewline/runtime-state';

export interface OverheadBenchOptions {
  /** Tasks in the crew. Default 50. */
  tasks?: number;
  /** Simulated model latency per call, in milliseconds. Default 10. */
  latencyMs?: number;
  /** Measured runs per variant (after one warm-up each). Default 5. */
  runs?: number;
  /** Size of each answer in bytes. Default 2048. */
  responseBytes?: number;
  /** Where the markdown report goes. Default `bench/results/run-overhead.md`. */
  reportPath?: string;
  /** Also measure JsonProvider on '*' (fsync per checkpoint: slow by design). Default `true`. */
  includeJson?: boolean;
}

type ToolSchema = Parameters<typeof defineTool>[0]['inputSchema'];

/**
 * The runtime's own copy of zod: the bench does not depend on zod, and a tool schema must come from
 * the same zod instance the runtime checks against.
 */
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

function crew50(
  options: { tasks: number; latencyMs: number; responseBytes: number },
  checkpoint: CheckpointConfigInput | false,
) {
  const llm = offlineModel({
    latencyMs: options.latencyMs,
    responseBytes: options.responseBytes,
    // One tool call at the start of each task's conversation, then the answer.
    script: (call) =>
      call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
        ? { toolName: 'notes', input: { subject: 'the task' } }
        : undefined,
  });
  const agents = ['Researcher', 'Writer', 'Reviewer'].map(
    (role) =>
      new Agent({
        role,
        goal: `Do the ${role.toLowerCase()} work on {topic}`,
        backstory: 'Experienced',
        llm,
        tools: [notes],
      }),
  );
  const tasks = Array.from(
    { length: options.tasks },
    (_, index) =>
      new Task({
        name: `step-${index + 1}`,
        description: `Step ${index + 1} of the {topic} report: extend the previous step with new findings`,
        expectedOutput: 'about two kilobytes of notes',
        agent: agents[index % agents.length]!,
      }),
  );
  return { crew: new Crew({ name: 'crew-50', agents, tasks, checkpoint }), llm };
}

interface Variant {
  name: string;
  /** A fresh checkpoint config (and what to clean up) for one run, or `false` for no checkpointing. */
  setup: (directory: string) => { checkpoint: CheckpointConfigInput | false; provider?: CheckpointProvider };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs the overhead benchmark, prints its report, and returns the SQLite-over-none ratio. */
export async function runOverheadBench(
  input: OverheadBenchOptions = {},
): Promise<{ ratio: number; report: string }> {
  const options = {
    tasks: input.tasks ?? 50,
    latencyMs: input.latencyMs ?? 10,
    responseBytes: input.responseBytes ?? 2048,
  };
  const runs = input.runs ?? 5;
  const loadBefore = loadavg()[0]!;
  const variants: Variant[] = [
    { name: 'no checkpointing', setup: () => ({ checkpoint: false }) },
    {
      name: "'*' on SqliteProvider",
      setup: (directory) => {
        const provider = new SqliteProvider();
        return {
          checkpoint: { location: join(directory, 'crew-50.db'), onEvents: ['*'], provider },
          provider,
        };
      },
    },
  ];
  if (input.includeJson !== false) {
    variants.push({
      name: "'*' on JsonProvider (for reference)",
      setup: (directory) => ({
        checkpoint: { location: join(directory, 'json'), onEvents: ['*'], provider: new JsonProvider() },
      }),
    });
  }
  const times = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
  // CPU time as well: on a busy machine wall time is noisy, CPU time per checkpoint is not.
  const cpuTimes = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
  let checkpoints = 0;
  let events = 0;
  let modelCalls = 0;
  // One warm-up round, then `runs` measured rounds; variants interleave so drift hits all alike.
  for (let round = 0; round <= runs; round += 1) {
    for (const variant of variants) {
      const directory = mkdtempSync(join(tmpdir(), 'crewline-overhead-'));
      const { checkpoint, provider } = variant.setup(directory);
      const { crew, llm } = crew50(options, checkpoint);
      let written = 0;
      let emitted = 0;
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      await crew.kickoff({ inputs: { topic: 'tidal energy' } });
      const elapsed = performance.now() - started;
      const cpu = process.cpuUsage(cpuStarted);
      const state = crew.lastRun?.state;
      emitted = state?.events.length ?? 0;
      written = state?.lineage.checkpointId ? countWrites(state.events) : 0;
      await provider?.close?.();
      rmSync(directory, { recursive: true, force: true });
      if (round > 0) {
        times.get(variant.name)!.push(elapsed);
        cpuTimes.get(variant.name)!.push((cpu.user + cpu.system) / 1000);
      }
      if (variant.name.includes('Sqlite')) {
        checkpoints = written;
        events = emitted;
        modelCalls = llm.calls.length;
      }
    }
  }
  const baseline = median(times.get(variants[0]!.name)!);
  const baselineCpu = median(cpuTimes.get(variants[0]!.name)!);
  const rows = variants.map((variant) => {
    const samples = times.get(variant.name)!;
    const value = median(samples);
    const cpu = median(cpuTimes.get(variant.name)!);
    const perCheckpoint =
      checkpoints > 0 && cpu > baselineCpu ? ((cpu - baselineCpu) / checkpoints).toFixed(3) : '-';
    return `| ${variant.name} | ${value.toFixed(0)} ms | ${(value / baseline).toFixed(3)}× | ${cpu.toFixed(0)} ms | ${perCheckpoint} | ${samples.map((sample) => sample.toFixed(0)).join(', ')} |`;
  });
  const ratio = median(times.get(variants[1]!.name)!) / baseline;
  const report = [
    '# Run overhead of checkpointing (crew-50)',
    '',
    `${options.tasks} tasks, 3 agents, answers of ${options.responseBytes} bytes, one tool call per task: ${modelCalls} model calls, ${events} events and ${checkpoints} checkpoints per checkpointed run. Offline model with a simulated latency of ${options.latencyMs} ms per call (a real model is far slower, which makes the ratio smaller). Median of ${runs} runs per variant after one warm-up, interleaved, same process (Node ${process.version}).`,
    '',
    '| variant | median wall time | vs. none | median CPU time | extra CPU ms per checkpoint | wall time of each run (ms) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `SQLite '*' overhead: ${ratio.toFixed(3)}× (target ≤ 1.2×): ${ratio <= 1.2 ? 'met' : 'NOT met'}.`,
    '',
    `Machine: ${cpus().length} CPUs, 1-minute load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after (wall times grow with load; CPU time per checkpoint much less).`,
  ].join('\n');
  console.log(report);
  const reportPath =
    input.reportPath ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'run-overhead.md');
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${report}\n`);
  return { ratio, report };
}

/** Automatic checkpoints of a '*' run: one per recorded event (lifecycle events are not recorded). */
function countWrites(events: readonly unknown[]): number {
  return events.length;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runOverheadBench();
}
