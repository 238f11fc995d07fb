// Run overhead of checkpointing (SPEC §8, issue 13): crew-50 — 3 agents, 50 tasks, ≈2 KB answers,
// one tool call per task (≈10 events per task) — checkpointing on '*' to SqliteProvider and to
// JsonProvider, against the same run with checkpointing off. What a user pays for one run: every
// measured run is one kickoff in a fresh process (overhead-child.ts, compiled once like the crash
// trials' children), so module loading on first use, cold caches and the end-of-run drain of the
// background writer all count. Variants interleave round by round; medians of several runs each, at
// a simulated model latency of 10 ms per call and at 0 ms (no model time: all of checkpointing shows).
// A real model takes hundreds of milliseconds to seconds per call, which only makes the ratio smaller.
//   pnpm --filter @crewline/bench bench:overhead
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prepareChildScript, startChild } from './crash/child-script.js';
import { type BarrierProbeRow, probeBarrierGroups } from './overhead/barrier-probe.js';
import type { OverheadSample, OverheadVariant } from './overhead/overhead-sample.js';

export interface OverheadBenchOptions {
  /** Tasks in the crew. Default 50. */
  tasks?: number;
  /** Simulated model latencies per call, in milliseconds; each gets its own rows. Default `[10, 0]`. */
  latencies?: readonly number[];
  /** Measured cold runs per variant and latency (after one warm-up round). Default 5. */
  runs?: number;
  /** Size of each answer in bytes. Default 2048. */
  responseBytes?: number;
  /** Where the markdown report goes. Default `bench/results/run-overhead.md`. */
  reportPath?: string;
  /** Print the report. Default `true`. */
  print?: boolean;
  /** Groups per shape of the barrier probe written after the runs (see barrier-probe.ts). Default 40. */
  probeRounds?: number;
}

/** The bars of issue 13 at 10 ms per model call: '*' over no checkpointing, as configured by default. */
const targets = { sqlite: 1.1, json: 1.5 };
/** SPEC §8's bar for SQLite on '*'. */
const specSqliteBar = 1.2;

const variants: { variant: OverheadVariant; name: string }[] = [
  { variant: 'none', name: 'no checkpointing' },
  { variant: 'sqlite', name: "'*' on SqliteProvider (default: a commit per checkpoint)" },
  { variant: 'sqlite-groups', name: "'*' on SqliteProvider, `groupCommit: true`" },
  { variant: 'sqlite-full', name: "'*' on SqliteProvider, `synchronous: 'full'`" },
  {
    variant: 'sqlite-full-groups',
    name: "'*' on SqliteProvider, `synchronous: 'full'`, `groupCommit: true`",
  },
  { variant: 'json', name: "'*' on JsonProvider" },
];

interface Measured extends OverheadSample {
  /** Spawn to exit: the kickoff plus starting node, loading the modules and closing. */
  processMs: number;
}

export interface OverheadResult {
  /** Per latency, the median kickoff wall time of each '*' variant over that of no checkpointing. */
  ratios: Map<number, Record<Exclude<OverheadVariant, 'none'>, number>>;
  report: string;
}

/**
 * The share of the last 60 s in which some task waited for I/O (Linux pressure stall information),
 * as a percentage; undefined where the kernel does not report it. JSON's barriers wait for the
 * shared disk, so what other processes make it do shows in them, load average or not.
 */
function ioPressure(): number | undefined {
  try {
    const some = readFileSync('/proc/pressure/io', 'utf8').match(/^some avg10=[\d.]+ avg60=([\d.]+)/m);
    return some ? Number(some[1]) : undefined;
  } catch {
    return undefined;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One kickoff in a fresh process, in a directory of its own. */
async function coldRun(
  script: Awaited<ReturnType<typeof prepareChildScript>>,
  variant: OverheadVariant,
  options: { latencyMs: number; tasks: number; responseBytes: number },
): Promise<Measured> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-overhead-'));
  try {
    const { ended } = startChild(script, [
      '--variant',
      variant,
      '--latency',
      String(options.latencyMs),
      '--tasks',
      String(options.tasks),
      '--response-bytes',
      String(options.responseBytes),
      '--directory',
      directory,
    ]);
    const end = await ended;
    const line = end.stdout.trim().split('\n').at(-1) ?? '';
    if (end.code !== 0 || !line.startsWith('{')) {
      throw new Error(
        `run-overhead: the ${variant} run at ${options.latencyMs} ms exited with ${end.code ?? end.signal}: ${end.stderr.trim() || end.stdout.trim()}`,
      );
    }
    const measured: Measured = { ...(JSON.parse(line) as OverheadSample), processMs: end.wallMs };
    return measured;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Runs the overhead benchmark, writes (and prints) its report, and returns the ratios. */
export async function runOverheadBench(input: OverheadBenchOptions = {}): Promise<OverheadResult> {
  const options = {
    tasks: input.tasks ?? 50,
    responseBytes: input.responseBytes ?? 2048,
  };
  const latencies = input.latencies ?? [10, 0];
  const runs = input.runs ?? 5;
  const loadBefore = loadavg();
  const ioPressureBefore = ioPressure();
  const script = await prepareChildScript(
    fileURLToPath(new URL('./overhead/overhead-child.ts', import.meta.url)),
  );
  const samples = new Map<string, Measured[]>();
  const key = (latencyMs: number, variant: OverheadVariant) => `${latencyMs}:${variant}`;
  try {
    // One warm-up round (the compiled child and the modules it loads come into the page cache), then
    // `runs` rounds; within a round every variant runs once per latency, in an order that rotates so
    // that no variant always follows the same one.
    for (let round = 0; round <= runs; round += 1) {
      for (const latencyMs of latencies) {
        for (let index = 0; index < variants.length; index += 1) {
          const { variant } = variants[(index + round) % variants.length]!;
          const measured = await coldRun(script, variant, { ...options, latencyMs });
          if (round === 0) continue;
          const list = samples.get(key(latencyMs, variant)) ?? [];
          list.push(measured);
          samples.set(key(latencyMs, variant), list);
        }
      }
    }
  } finally {
    script.dispose();
  }
  const loadAfter = loadavg();
  const ioPressureAfter = ioPressure();
  // After the runs, not among them: the probe's groups would otherwise load the runs beside them.
  const probeDirectory = mkdtempSync(join(tmpdir(), 'crewline-overhead-probe-'));
  let probe: BarrierProbeRow[];
  try {
    probe = await probeBarrierGroups({ directory: probeDirectory, rounds: input.probeRounds ?? 40 });
  } finally {
    rmSync(probeDirectory, { recursive: true, force: true });
  }
  const probeOf = (files: number, fileBytes: number) =>
    probe.find((row) => row.files === files && row.fileBytes === fileBytes)!.medianMs;

  const ratios = new Map<number, Record<Exclude<OverheadVariant, 'none'>, number>>();
  const rows: string[] = [];
  const verdicts: string[] = [];
  let shape = '';
  for (const latencyMs of latencies) {
    const none = samples.get(key(latencyMs, 'none'))!;
    const baseline = median(none.map((sample) => sample.kickoffMs));
    const baselineCpu = median(none.map((sample) => sample.cpuMs));
    const baselineProcess = median(none.map((sample) => sample.processMs));
    const ratio: Record<Exclude<OverheadVariant, 'none'>, number> = {
      sqlite: Number.NaN,
      'sqlite-groups': Number.NaN,
      'sqlite-full': Number.NaN,
      'sqlite-full-groups': Number.NaN,
      json: Number.NaN,
    };
    for (const { variant, name } of variants) {
      const list = samples.get(key(latencyMs, variant))!;
      const wall = median(list.map((sample) => sample.kickoffMs));
      const cpu = median(list.map((sample) => sample.cpuMs));
      const processWall = median(list.map((sample) => sample.processMs));
      const checkpoints = list[0]!.checkpoints;
      if (variant !== 'none') {
        ratio[variant] = wall / baseline;
        shape ||= `${list[0]!.modelCalls} model calls, ${list[0]!.events} events and ${checkpoints} checkpoints per checkpointed run`;
      }
      const perCheckpoint = checkpoints > 0 ? ((cpu - baselineCpu) / checkpoints).toFixed(3) : '-';
      const building = median(list.map((sample) => sample.buildingMs));
      const waiting = median(list.map((sample) => sample.barrierWaitMs));
      rows.push(
        `| ${latencyMs} ms | ${name} | ${wall.toFixed(0)} ms | ${(wall / baseline).toFixed(3)}× | ${cpu.toFixed(0)} ms | ${perCheckpoint} | ${variant === 'none' ? '-' : `${building.toFixed(0)} ms`} | ${variant === 'none' ? '-' : `${waiting.toFixed(0)} ms`} | ${processWall.toFixed(0)} ms (${(processWall / baselineProcess).toFixed(3)}×) | ${list.map((sample) => sample.kickoffMs.toFixed(0)).join(', ')} |`,
      );
    }
    ratios.set(latencyMs, ratio);
    {
      const json = samples.get(key(latencyMs, 'json'))!;
      const barriers = json[0]!.modelCalls + options.tasks;
      const waiting = median(json.map((sample) => sample.barrierWaitMs));
      const building = median(json.map((sample) => sample.buildingMs));
      const extra = median(json.map((sample) => sample.kickoffMs)) - baseline;
      verdicts.push(
        `Where JSON's extra ${extra.toFixed(0)} ms at ${latencyMs} ms go: ${waiting.toFixed(0)} ms waiting at its ${barriers} barriers (${(waiting / barriers).toFixed(2)} ms each: the files queued since the last barrier written, fsync'd and renamed, their directory synced; ${((json[0]!.fileBytes ?? 0) / 1024 / 1024).toFixed(1)} MiB in all, since every file holds the whole history), ${building.toFixed(0)} ms taking its ${json[0]!.checkpoints} checkpoints in the events (${((building / json[0]!.checkpoints) * 1000).toFixed(0)} µs each).`,
      );
    }
    if (latencyMs === 10) {
      for (const variant of ['sqlite', 'json'] as const) {
        const met = ratio[variant] <= targets[variant];
        verdicts.push(
          `${variant === 'sqlite' ? 'SQLite' : 'JSON'} '*' at 10 ms: ${ratio[variant].toFixed(3)}× (issue 13 bar ≤ ${targets[variant]}×): ${met ? 'met' : 'NOT met'}.`,
        );
      }
      verdicts.push(
        `SQLite '*' at 10 ms against SPEC §8's bar of ≤ ${specSqliteBar}×: ${ratio.sqlite <= specSqliteBar ? 'met' : 'NOT met'}.`,
        `In the same rounds: SQLite with \`groupCommit: true\` ${ratio['sqlite-groups'].toFixed(3)}×; with \`synchronous: 'full'\` (a commit is fsync'd before it returns) ${ratio['sqlite-full'].toFixed(3)}×, and with groups as well ${ratio['sqlite-full-groups'].toFixed(3)}×.`,
      );
    } else {
      verdicts.push(
        `At ${latencyMs} ms per model call: SQLite ${ratio.sqlite.toFixed(3)}× (\`groupCommit: true\` ${ratio['sqlite-groups'].toFixed(3)}×; \`synchronous: 'full'\` ${ratio['sqlite-full'].toFixed(3)}×, with groups ${ratio['sqlite-full-groups'].toFixed(3)}×), JSON ${ratio.json.toFixed(3)}× (no bar; the run is then nothing but checkpointing and bookkeeping).`,
      );
    }
  }

  const report = [
    '# Run overhead of checkpointing (crew-50, cold single runs)',
    '',
    `${options.tasks} tasks, 3 agents, answers of ${options.responseBytes} bytes, one tool call per task: ${shape}. Every run is one kickoff in a new process (the child script compiled once into one module, as the crash trials do): nothing loaded or warmed by an earlier run. Offline model with a simulated latency per call of ${latencies.join(' ms and ')} ms (a real model is far slower, which makes the ratio smaller). Median of ${runs} runs per variant and latency after one warm-up round, variants interleaved (Node ${process.version}).`,
    '',
    "Kickoff wall time runs until kickoff returns, that is until every checkpoint is written and synced; CPU time is the process's during the kickoff (main thread and thread pool, user and system). Where a checkpointed run's extra time goes, summed over the run: *checkpoints taken in the events* is the time the run's thread spent inside its automatic checkpoints (snapshot, redaction, queueing; with a commit per checkpoint, and for a model completion's checkpoint on SQLite, the whole synchronous write), *waiting at barriers* the time it waited in `state.durable()` before model and tool calls for the checkpoints queued since the last one to be written (JSON: written and synced; SQLite with group commit: committed as one group; a group a turn of the event loop ended before the barrier is in neither column). Process wall time is spawn to exit.",
    '',
    '| model latency | variant | median kickoff wall time | vs. none | median CPU time | extra CPU ms per checkpoint | checkpoints taken in the events | waiting at barriers | median process wall time (vs. none) | kickoff wall time of each run (ms) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...verdicts.flatMap((line) => [line, '']),
    `What a barrier pays for, measured after the runs in this process: \`JsonProvider.writeBatch\` of groups shaped like crew-50's (2 files at a model or tool call, 6 where a task ends and the next starts), files of about 50 KB (crew-50's first checkpoints) and 375 KB (its average), median of ${input.probeRounds ?? 40} groups per shape, interleaved, 10 ms apart (the files' bytes built beforehand, as a run's come from lines it encoded at each event):`,
    '',
    '| files per group | bytes per file | median group write |',
    '| --- | --- | --- |',
    ...probe.map(
      (row) => `| ${row.files} | ${(row.fileBytes / 1000).toFixed(0)} KB | ${row.medianMs.toFixed(2)} ms |`,
    ),
    '',
    `7.5× the bytes per file took ${(probeOf(2, 375_000) / probeOf(2, 50_000)).toFixed(2)}× the time in groups of 2 and ${(probeOf(6, 375_000) / probeOf(6, 50_000)).toFixed(2)}× in groups of 6; 3× the files took ${(probeOf(6, 50_000) / probeOf(2, 50_000)).toFixed(2)}× the time at 50 KB and ${(probeOf(6, 375_000) / probeOf(2, 375_000)).toFixed(2)}× at 375 KB.`,
    '',
    `Machine: ${cpus().length} CPUs, shared; 1-, 5- and 15-minute load averages ${loadBefore.map((value) => value.toFixed(1)).join(' / ')} before and ${loadAfter.map((value) => value.toFixed(1)).join(' / ')} after (wall times grow with load; the ratios come from runs interleaved under the same load)${ioPressureBefore === undefined || ioPressureAfter === undefined ? '' : `; some task waited for I/O ${ioPressureBefore.toFixed(1)}% of the minute before and ${ioPressureAfter.toFixed(1)}% of the minute after (Linux's /proc/pressure/io: the disk JSON's barriers wait for is shared)`}.`,
  ].join('\n');
  if (input.print !== false) console.log(report);
  const reportPath =
    input.reportPath ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'run-overhead.md');
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${report}\n`);
  return { ratios, report };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = process.argv.includes('--runs')
    ? Number(process.argv[process.argv.indexOf('--runs') + 1])
    : undefined;
  await runOverheadBench(runs === undefined ? {} : { runs });
}
