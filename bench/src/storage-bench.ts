// The storage benchmark of SPEC §8 ("crew-50"): crewline's SQLite and JSON providers and
// LangGraph's SqliteSaver, side by side in one run, plus list/latest/restore over 10,000 checkpoints.
// Run alone with `pnpm --filter @crewline/bench bench:storage`, or with everything via `pnpm bench`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import {
  collectGarbageIfExposed,
  formatBytes,
  formatMs,
  type LatencySummary,
  markdownTable,
  summarize,
} from './bench-statistics.js';
import { type Crew50Options, createCrew50Run } from './scenario/crew-50.js';
import {
  crewlineSubject,
  langGraphSubject,
  type StorageRunResult,
  type StorageSubject,
} from './storage-subjects.js';

export interface StorageBenchOptions {
  scenario?: Crew50Options;
  /** Checkpoints in the list/latest database. Default 10,000. */
  listCheckpoints?: number;
  /** Where the markdown report is written. Default `bench/results/storage.md`. */
  reportPath?: string;
  /** Measured runs per backend (after one warm-up run each); latencies are pooled. Default 3. */
  rounds?: number;
}

/** SPEC §8 targets for SqliteProvider on crew-50. */
const targets = { medianMs: 0.1, p99Ms: 2, bytesPerFinal: 3, speedup: 20, listMs: 200, restoreMs: 20 };

async function jsonSubject(): Promise<StorageSubject | undefined> {
  try {
    const { JsonProvider } = (await import('@crewline/provider-json')) as {
      JsonProvider: new () => CheckpointProvider;
    };
    return crewlineSubject('JsonProvider', () => new JsonProvider());
  } catch (error) {
    console.warn(`JsonProvider is not available, skipped: ${(error as Error).message}`);
    return undefined;
  }
}

export interface Measured {
  subject: StorageSubject;
  result: StorageRunResult;
  write: LatencySummary;
  endToEnd?: LatencySummary;
}

/**
 * One table row per measured backend: write latencies, bytes stored and written, stored over final
 * checkpoint size, the median write's speedup over `baseline` (the LangGraph saver measured
 * alongside), and the end-to-end median.
 */
export function writeRows(measured: readonly Measured[], baseline: Measured): string[][] {
  return measured.map(({ subject, result, write, endToEnd }) => [
    subject.name,
    String(write.count),
    formatMs(write.median),
    formatMs(write.p99),
    formatMs(write.max),
    formatBytes(result.storedBytes),
    formatBytes(result.bytesWritten),
    formatBytes(result.finalCheckpointBytes),
    `${(result.storedBytes / result.finalCheckpointBytes).toFixed(2)}×`,
    subject === baseline.subject ? '1×' : `${(baseline.write.median / write.median).toFixed(1)}×`,
    endToEnd ? formatMs(endToEnd.median) : 'n/a',
  ]);
}

/** One crew-50 run: after each event, each of `subjects` writes its checkpoint. */
async function play(subjects: readonly StorageSubject[], scenario: Crew50Options, directory: string) {
  const run = createCrew50Run(scenario);
  const sessions = subjects.map((subject) => subject.open(directory, run));
  await run.play(async (trigger) => {
    for (const session of sessions) await session.afterEvent(trigger);
  });
  const results: StorageRunResult[] = [];
  for (const session of sessions) results.push(await session.finish());
  return results;
}

/**
 * Each backend gets runs of its own (a run checkpoints to one provider, so the only other work
 * between two writes is the run's own), after one warm-up run each. The runs go in rounds, in a
 * rotating order, and the latencies of all rounds are pooled: a noisy neighbour on the machine
 * during one round weighs on every backend alike.
 */
export async function measure(subjects: readonly StorageSubject[], scenario: Crew50Options, rounds: number) {
  for (const subject of subjects) {
    const warmup = mkdtempSync(join(tmpdir(), 'crewline-bench-warmup-'));
    try {
      await play([subject], { ...scenario, snapshots: subject.snapshots ?? scenario.snapshots }, warmup);
    } finally {
      rmSync(warmup, { recursive: true, force: true });
    }
  }
  const pooled = subjects.map(() => ({
    writeMs: [] as number[],
    endToEndMs: [] as number[],
    last: undefined as StorageRunResult | undefined,
  }));
  for (let round = 0; round < rounds; round += 1) {
    for (let offset = 0; offset < subjects.length; offset += 1) {
      const index = (round + offset) % subjects.length;
      // No forced collection between runs: right after a forced full gc() V8 ran the next few
      // hundred writes of every backend markedly slower; the incremental collections of a running
      // process showed no such slowdown.
      const directory = mkdtempSync(join(tmpdir(), 'crewline-bench-'));
      try {
        const subject = subjects[index]!;
        const [result] = await play(
          [subject],
          { ...scenario, snapshots: subject.snapshots ?? scenario.snapshots },
          directory,
        );
        pooled[index]!.writeMs.push(...result!.writeMs);
        pooled[index]!.endToEndMs.push(...(result!.endToEndMs ?? []));
        pooled[index]!.last = result;
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    }
  }
  return subjects.map((subject, index): Measured => {
    const { writeMs, endToEndMs, last } = pooled[index]!;
    return {
      subject,
      result: last!,
      write: summarize(writeMs),
      endToEnd: endToEndMs.length > 0 ? summarize(endToEndMs) : undefined,
    };
  });
}

interface ListTimings {
  checkpoints: number;
  listMs: LatencySummary;
  latestMs: LatencySummary;
  restoreMs: LatencySummary;
  storedBytes: number;
}

/** Fills one database with `count` crew-50 checkpoints, then times list, latest and a latest restore. */
async function measureListing(count: number, scenario: Crew50Options): Promise<ListTimings> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-bench-list-'));
  try {
    const writer = new SqliteProvider();
    const location = writer.resolveLocation(join(directory, 'many'));
    let written = 0;
    for (let runIndex = 0; written < count; runIndex += 1) {
      const run = createCrew50Run({
        ...scenario,
        seed: runIndex + 1,
        provider: writer,
        location,
        branch: `run-${runIndex}`,
      });
      await run.play((trigger) => {
        if (written < count) run.state.writeCheckpointSync({ trigger });
        written += 1;
      });
    }
    writer.close();
    const reader = new SqliteProvider();
    const time = async (repeat: number, action: () => Promise<unknown>) => {
      const samples: number[] = [];
      // Filling the database left a large heap behind; do not bill its collection to the reads.
      collectGarbageIfExposed();
      for (let index = 0; index < repeat; index += 1) {
        const started = performance.now();
        await action();
        samples.push(performance.now() - started);
      }
      return summarize(samples);
    };
    const listMs = await time(7, async () => {
      const list = await reader.list(location);
      if (list.length !== count) throw new Error(`listed ${list.length} of ${count} checkpoints`);
    });
    const latestMs = await time(51, () => reader.latest(location));
    const restoreMs = await time(11, async () => {
      const latest = await reader.latest(location);
      await readDocument(reader, location, latest!.id);
    });
    const stats = await reader.stats(location);
    reader.close();
    return { checkpoints: count, listMs, latestMs, restoreMs, storedBytes: stats?.databaseBytes ?? 0 };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function verdict(ok: boolean): string {
  return ok ? 'met' : '**not met**';
}

/** Runs the whole storage benchmark, prints the report and writes it to `reportPath`. */
export async function runStorageBench(options: StorageBenchOptions = {}): Promise<string> {
  const scenario = options.scenario ?? {};
  const loadBefore = loadavg()[0]!;
  const subjects: StorageSubject[] = [
    crewlineSubject('SqliteProvider (synchronous: normal, default)', () => new SqliteProvider()),
    crewlineSubject('SqliteProvider (synchronous: full)', () => new SqliteProvider({ synchronous: 'full' })),
    crewlineSubject(
      'SqliteProvider (default; crew snapshots rebuilt whole each time)',
      () => new SqliteProvider(),
      'fresh',
    ),
  ];
  const json = await jsonSubject();
  if (json) subjects.push(json);
  subjects.push(await langGraphSubject());

  const rounds = options.rounds ?? 7;
  console.log(`measuring ${subjects.map((subject) => subject.name).join(', ')} (${rounds} rounds) ...`);
  const measured = await measure(subjects, scenario, rounds);
  const baseline = measured.find((entry) => entry.subject.name.startsWith('LangGraph'))!;
  const rows = writeRows(measured, baseline);
  const crewTable = markdownTable(
    [
      'backend',
      'writes measured',
      'median ms',
      'p99 ms',
      'max ms',
      'stored',
      'written (syscalls)',
      'final checkpoint',
      'stored / final',
      'speedup vs SqliteSaver (median)',
      'state.checkpoint() median ms',
    ],
    rows,
  );

  console.log(`measuring list/latest over ${options.listCheckpoints ?? 10_000} checkpoints ...`);
  const listing = await measureListing(options.listCheckpoints ?? 10_000, scenario);
  const listTable = markdownTable(
    ['operation (SqliteProvider)', 'median ms', 'p99 ms', 'runs'],
    [
      [
        `list ${listing.checkpoints} (metadata)`,
        formatMs(listing.listMs.median),
        formatMs(listing.listMs.p99),
        String(listing.listMs.count),
      ],
      [
        `latest of ${listing.checkpoints}`,
        formatMs(listing.latestMs.median),
        formatMs(listing.latestMs.p99),
        String(listing.latestMs.count),
      ],
      [
        `restore latest of ${listing.checkpoints} (latest + read + validate)`,
        formatMs(listing.restoreMs.median),
        formatMs(listing.restoreMs.p99),
        String(listing.restoreMs.count),
      ],
    ],
  );

  const sqlite = measured[0]!;
  const ratio = sqlite.result.storedBytes / sqlite.result.finalCheckpointBytes;
  const speedup = baseline.write.median / sqlite.write.median;
  const targetLines = [
    `- median write ≤ ${targets.medianMs} ms: ${formatMs(sqlite.write.median)} ms — ${verdict(sqlite.write.median <= targets.medianMs)}`,
    `- p99 write ≤ ${targets.p99Ms} ms: ${formatMs(sqlite.write.p99)} ms — ${verdict(sqlite.write.p99 <= targets.p99Ms)}`,
    `- stored bytes ≤ ${targets.bytesPerFinal}× the final checkpoint: ${ratio.toFixed(2)}× — ${verdict(ratio <= targets.bytesPerFinal)}`,
    `- ≥ ${targets.speedup}× faster than SqliteSaver (median): ${speedup.toFixed(1)}× — ${verdict(speedup >= targets.speedup)}`,
    `- list ${listing.checkpoints} ≤ ${targets.listMs} ms: ${formatMs(listing.listMs.median)} ms — ${verdict(listing.listMs.median <= targets.listMs)}`,
    `- restore latest of ${listing.checkpoints} ≤ ${targets.restoreMs} ms: ${formatMs(listing.restoreMs.median)} ms — ${verdict(listing.restoreMs.median <= targets.restoreMs)}`,
  ];
  const cpu = cpus();
  const report = [
    '# Storage benchmark (crew-50)',
    '',
    `Run ${new Date().toISOString()} on ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${process.platform}; load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (other work on the machine slows every backend; p99 and max suffer most).`,
    `Scenario: ${scenario.tasks ?? 50} tasks × 10 events, one checkpoint per event, ≈${scenario.outputBytes ?? 2048} B per task output and LLM response.`,
    'The crew snapshots the way `@crewline/runtime` does (agent definitions, completed tasks and finished messages built once and settled in the run, `SettledValues`); the "rebuilt whole" row deep-copies everything on every snapshot instead (the worst case for a provider).',
    `Each backend stores the same state sequence in runs of its own: one warm-up run, then ${rounds} measured runs each, in rotating order; latencies pooled over the ${rounds} runs (${rounds * 500} writes), storage from the last.`,
    'Write latency is the backend call alone (`provider.writeSync`/`write`, `SqliteSaver.put`);',
    '"state.checkpoint() median" adds the snapshot and redaction RuntimeState does before calling the provider.',
    '"stored" is what the backend keeps once closed; "written (syscalls)" is every byte the process passed to write(2) from the backend\'s opening until it closed (WAL frames, WAL checkpoints, including those run while idle and at close).',
    'Runs follow each other without forcing a garbage collection in between (a forced full collection slowed the next few hundred writes of a backend; see `measure` in bench/src/storage-bench.ts).',
    "Model and tool calls take no time, but complete in a later turn of the event loop, as real I/O does: timers (SqliteProvider's idle-time WAL checkpoints) run between writes as in a real run.",
    '',
    crewTable,
    '',
    `Stored database with ${listing.checkpoints} checkpoints: ${formatBytes(listing.storedBytes)}.`,
    '',
    listTable,
    '',
    '## SPEC §8 targets for SqliteProvider (default options)',
    '',
    ...targetLines,
    '',
  ].join('\n');
  console.log(`\n${report}`);
  const reportPath = options.reportPath ?? fileURLToPath(new URL('../results/storage.md', import.meta.url));
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, report);
  console.log(`report written to ${reportPath}`);
  return report;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runStorageBench();
}
