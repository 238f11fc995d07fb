// The Postgres storage benchmark of SPEC §8 ("crew-50"): PostgresProvider beside LangGraph's
// PostgresSaver on the same local server in the same run, plus the cost of a lease claim and renewal.
// Run alone with `pnpm --filter @crewline/bench bench:postgres`, or with everything via `pnpm bench`.
// The server: CREWLINE_BENCH_POSTGRES_URL, else a throwaway cluster with Postgres's default
// durability (initdb from PATH or Debian's /usr/lib/postgresql/<version>/bin).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PostgresProvider, type PostgresProviderOptions } from '@crewline/provider-postgres';
import {
  findPostgresBinaries,
  startCluster,
  type TestCluster,
} from '../node_modules/@crewline/provider-postgres/src/test-support/test-cluster.js';
import { formatBytes, formatMs, type LatencySummary, markdownTable, summarize } from './bench-statistics.js';
import { measureRunCost } from './postgres-run-cost.js';
import {
  BenchServer,
  type Breakdowns,
  benchSchema,
  postgresProviderSubject,
  postgresSaverSubject,
  withSchema,
} from './postgres-subjects.js';
import type { Crew50Options } from './scenario/crew-50.js';
import { measure, writeRows } from './storage-bench.js';
import type { StorageSubject } from './storage-subjects.js';

/** The environment variable naming a server to measure instead of a throwaway cluster. */
export const BENCH_POSTGRES_URL_VARIABLE = 'CREWLINE_BENCH_POSTGRES_URL';

export interface PostgresStorageBenchOptions {
  scenario?: Crew50Options;
  /** Measured runs per backend (after one warm-up run each); latencies are pooled. Default 7. */
  rounds?: number;
  /** Lease claims and renewals timed per provider variant (after 20 unmeasured). Default 300. */
  leaseSamples?: number;
  /** The server; default `CREWLINE_BENCH_POSTGRES_URL`, else a throwaway durable cluster. */
  url?: string;
  /** Where the markdown report is written. Default `bench/results/postgres.md`. */
  reportPath?: string;
  /** Also measure PostgresProvider over TCP to 127.0.0.1 (a throwaway cluster only). Default true. */
  tcp?: boolean;
  /** Also measure `pg_test_fsync` (a throwaway cluster only: the disk its WAL is on). Default true. */
  fsyncTest?: boolean;
  /**
   * Measured runs per backend of the run-cost table (what a run on '*' pays per checkpoint, with
   * and without group commit, beside PostgresSaver), after one warm-up run each. Default `rounds`.
   */
  runCostRounds?: number;
}

/** SPEC §8 targets for PostgresProvider on crew-50. */
const targets = { medianMs: 1, speedup: 10, bytesPerFinal: 3 };

interface LeaseCost {
  variant: string;
  claim: LatencySummary;
  renew: LatencySummary;
}

/**
 * Times `claimLease` (a run's first claim: the head check and a new lease row) and `renewLease`
 * (one `UPDATE … RETURNING` of that row) through the provider, each a durable commit of its own.
 */
async function measureLeases(
  server: BenchServer,
  url: string,
  variant: string,
  options: PostgresProviderOptions,
  samples: number,
): Promise<LeaseCost> {
  const provider = new PostgresProvider(options);
  const schema = benchSchema('leases');
  const location = provider.resolveLocation(withSchema(url, schema));
  const claimMs: number[] = [];
  const renewMs: number[] = [];
  try {
    const warmup = 20;
    for (let index = 0; index < warmup + samples; index += 1) {
      const token = { lineageId: `run-${index}`, owner: `owner-${index}` };
      let started = performance.now();
      await provider.claimLease(location, {
        ...token,
        holder: `bench pid ${process.pid}`,
        checkpointId: null,
        ttlMs: 30_000,
      });
      const claimed = performance.now() - started;
      started = performance.now();
      await provider.renewLease(location, token, 30_000);
      const renewed = performance.now() - started;
      if (index >= warmup) {
        claimMs.push(claimed);
        renewMs.push(renewed);
      }
    }
  } finally {
    await provider.close();
    await server.dropSchema(schema);
  }
  return { variant, claim: summarize(claimMs), renew: summarize(renewMs) };
}

/** `pg_test_fsync`'s line for the WAL's sync method on the disk of `directory`, or undefined. */
function fsyncCost(binaries: string, directory: string, method: string): string | undefined {
  const scratch = mkdtempSync(join(directory, 'fsync-'));
  try {
    const result = spawnSync(join(binaries, 'pg_test_fsync'), ['-s', '2', '-f', join(scratch, 'probe')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (result.status !== 0) return undefined;
    const section = result.stdout.split('Compare file sync methods using one 8kB write:')[1] ?? '';
    const line = section.split('\n').find((candidate) => candidate.trim().startsWith(`${method} `));
    const match = line === undefined ? null : /([\d.]+) ops\/sec\s+(\d+) usecs\/op/.exec(line);
    return match
      ? `${match[2]} µs per 8 kB write + ${method} (${Math.round(Number(match[1]))}/s)`
      : undefined;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function verdict(ok: boolean): string {
  return ok ? 'met' : '**not met**';
}

function ratio(value: number): string {
  return `${value.toFixed(2)}×`;
}

/**
 * Runs the Postgres storage benchmark, prints the report and writes it to `reportPath`. Without a
 * server (no URL, no initdb) it says so and returns undefined.
 */
export async function runPostgresStorageBench(
  options: PostgresStorageBenchOptions = {},
): Promise<string | undefined> {
  const scenario = options.scenario ?? {};
  const given = options.url ?? process.env[BENCH_POSTGRES_URL_VARIABLE];
  const binaries = findPostgresBinaries();
  if (!given && binaries === undefined) {
    console.log(
      `Postgres benchmark skipped: set ${BENCH_POSTGRES_URL_VARIABLE}=postgres://… or install PostgreSQL so that initdb is found`,
    );
    return undefined;
  }
  let cluster: TestCluster | undefined;
  const stopCluster = () => cluster?.stop();
  process.once('exit', stopCluster);
  try {
    if (!given) cluster = await startCluster(binaries!, { durable: true });
    const socketUrl = given ?? cluster!.socketUrl;
    const server = await BenchServer.connect(socketUrl);
    try {
      const loadBefore = loadavg()[0]!;
      const settings = {
        version: await server.serverVersion(),
        fsync: await server.setting('fsync'),
        synchronousCommit: await server.setting('synchronous_commit'),
        walSyncMethod: await server.setting('wal_sync_method'),
        fullPageWrites: await server.setting('full_page_writes'),
      };
      const breakdowns: Breakdowns = new Map();
      const ours = 'PostgresProvider (default: synchronousCommit on)';
      const subjects: StorageSubject[] = [
        postgresProviderSubject(ours, server, socketUrl, {}, breakdowns),
        postgresProviderSubject(
          "PostgresProvider (synchronousCommit: 'off')",
          server,
          socketUrl,
          { synchronousCommit: 'off' },
          breakdowns,
        ),
      ];
      if (cluster && (options.tcp ?? true)) {
        subjects.push(
          postgresProviderSubject(
            'PostgresProvider (default) over TCP 127.0.0.1',
            server,
            cluster.url,
            {},
            breakdowns,
          ),
        );
      }
      subjects.push(await postgresSaverSubject(server, socketUrl, breakdowns));

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
          'WAL written',
          'final checkpoint',
          'stored / final',
          'speedup vs PostgresSaver (median)',
          'state.writeCheckpoint() median ms',
        ],
        rows,
      );
      const breakdownTable = markdownTable(
        ['backend', 'stored', 'table rows', 'TOAST', 'indexes'],
        measured.map(({ subject }) => {
          const bytes = breakdowns.get(subject.name)!;
          return [
            subject.name,
            formatBytes(bytes.total),
            formatBytes(bytes.heap),
            formatBytes(bytes.toast),
            formatBytes(bytes.indexes),
          ];
        }),
      );

      const leaseSamples = options.leaseSamples ?? 300;
      console.log(`measuring lease claims and renewals (${leaseSamples} each) ...`);
      const leases = [
        await measureLeases(server, socketUrl, 'default (synchronousCommit on)', {}, leaseSamples),
        await measureLeases(
          server,
          socketUrl,
          "synchronousCommit: 'off'",
          { synchronousCommit: 'off' },
          leaseSamples,
        ),
      ];
      const leaseTable = markdownTable(
        ['PostgresProvider', 'operation', 'median ms', 'p99 ms', 'max ms', 'runs'],
        leases.flatMap(({ variant, claim, renew }) => [
          [
            variant,
            'claimLease (new lease)',
            formatMs(claim.median),
            formatMs(claim.p99),
            formatMs(claim.max),
            String(claim.count),
          ],
          [
            variant,
            'renewLease',
            formatMs(renew.median),
            formatMs(renew.p99),
            formatMs(renew.max),
            String(renew.count),
          ],
        ]),
      );
      const runCostRounds = options.runCostRounds ?? rounds;
      console.log(`measuring what a run pays per checkpoint (${runCostRounds} rounds) ...`);
      const runCost = await measureRunCost(server, socketUrl, scenario, runCostRounds);
      const saverCost = runCost.at(-1)!;
      const runCostTable = markdownTable(
        [
          'backend',
          'checkpoints measured',
          'checkpoints per commit',
          'median ms per checkpoint',
          'p99 ms',
          'max ms',
          'mean ms per checkpoint (run blocked / checkpoints)',
          'vs PostgresSaver (mean)',
        ],
        runCost.map((entry) => [
          entry.name,
          String(entry.perCheckpoint.count),
          entry.checkpointsPerCommit.toFixed(2),
          formatMs(entry.perCheckpoint.median),
          formatMs(entry.perCheckpoint.p99),
          formatMs(entry.perCheckpoint.max),
          formatMs(entry.meanBlockedMs),
          entry === saverCost ? '1×' : `${(saverCost.meanBlockedMs / entry.meanBlockedMs).toFixed(1)}× less`,
        ]),
      );
      const fsync =
        cluster && binaries && (options.fsyncTest ?? true)
          ? fsyncCost(binaries, tmpdir(), settings.walSyncMethod)
          : undefined;

      const provider = measured[0]!;
      const storedRatio = provider.result.storedBytes / provider.result.finalCheckpointBytes;
      const speedup = baseline.write.median / provider.write.median;
      const targetLines = [
        `- median write ≤ ${targets.medianMs} ms over the local socket: ${formatMs(provider.write.median)} ms — ${verdict(provider.write.median <= targets.medianMs)}`,
        `- ≥ ${targets.speedup}× faster than PostgresSaver (median): ${speedup.toFixed(1)}× — ${verdict(speedup >= targets.speedup)}`,
        `- stored ≤ ${targets.bytesPerFinal}× the final checkpoint: ${ratio(storedRatio)} — ${verdict(storedRatio <= targets.bytesPerFinal)}`,
      ];
      const cpu = cpus();
      const serverLine = given
        ? `Server: ${BENCH_POSTGRES_URL_VARIABLE} (Postgres ${settings.version}).`
        : `Server: a throwaway Postgres ${settings.version} cluster on this machine's disk, reached through its unix socket (one row over TCP 127.0.0.1 with a SCRAM login), Postgres's default durability: fsync ${settings.fsync}, synchronous_commit ${settings.synchronousCommit}, wal_sync_method ${settings.walSyncMethod}, full_page_writes ${settings.fullPageWrites}.`;
      const report = [
        '# Postgres storage benchmark (crew-50)',
        '',
        `Run ${new Date().toISOString()} on ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${process.platform}; load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (other work on the machine slows every backend; p99 and max suffer most).`,
        serverLine,
        `Scenario: ${scenario.tasks ?? 50} tasks × 10 events, one checkpoint per event, ≈${scenario.outputBytes ?? 2048} B per task output and LLM response.`,
        `Each backend stores the same state sequence in runs of its own, each run into a fresh schema of the one server: one warm-up run, then ${rounds} measured runs each, in rotating order; latencies pooled over the ${rounds} runs (${rounds * (scenario.tasks ?? 50) * 10} writes), storage from the last.`,
        'Write latency is the backend call alone — `provider.write` (its first write of a run also creates the schema), `PostgresSaver.put` (`setup()` runs before, untimed) — each a whole durable write: the commit returns once the server has flushed it (`synchronous_commit` on) unless the row says otherwise.',
        '"state.writeCheckpoint() median" adds the snapshot and redaction RuntimeState does before calling the provider.',
        'PostgresSaver gets the state the way a LangGraph graph stores it: inputs, entities and the event history as three channels; a put stores a blob of the whole value of each channel that changed (entities and events every time, inputs once) and the checkpoint row.',
        '"stored" is `pg_total_relation_size` of every table of the run\'s schema (rows, TOAST, indexes, free space and each relation\'s minimum pages), by the same query for both; "WAL written" is the server\'s WAL from the run\'s start to its end (server-wide: full-page images included).',
        '',
        crewTable,
        '',
        '### Where the stored bytes are (last run of each)',
        '',
        breakdownTable,
        '',
        '### Leases',
        '',
        `Through the provider on the unix socket, ${leaseSamples} runs of each after 20 unmeasured: a claim of a run nobody holds (one call of \`crewline_claim_lease\`: row lock, head check, new lease row) and a renewal (\`UPDATE … RETURNING\`), each its own transaction.`,
        '',
        leaseTable,
        '',
        "### What a run pays per checkpoint (runtime on '*', group commit)",
        '',
        `crew-50 again, this time as the runtime checkpoints on '*': each checkpoint is taken inside its event and queued, and before each model or tool call (after \`llm_call_started\` and \`tool_usage_started\`) the run waits for all of them (\`state.durable()\`). PostgresProvider stores what queued up between two calls as one group — \`writeBatch\`, one transaction — or, with \`writeBatch\` hidden, one write (one transaction) after another. "Per checkpoint" is bench/src/cost/checkpoint-timing.ts: taking it (snapshot, redaction, queueing) plus its share of the provider call that stored it, the call's whole time (the barrier right after it waits for all of it). "Mean" is all the time the run spent blocked on checkpoints (inside its events and at its barriers) over the checkpoints, which counts everything once. PostgresSaver gets the same states, each \`put\` awaited (LangGraph's synchronous durability), its snapshot and channel values included. One warm-up run each, then ${runCostRounds} runs each in rotating order, pooled; default options (synchronous_commit on).`,
        '',
        runCostTable,
        '',
        ...(fsync
          ? [
              `Disk flush on this machine (\`pg_test_fsync\`, the WAL's \`${settings.walSyncMethod}\`, in the directory the cluster's data is in): ${fsync}. With \`synchronous_commit\` on, every write, claim and renewal waits for one such flush of the WAL.`,
              '',
            ]
          : []),
        '## SPEC §8 targets for PostgresProvider (default options, unix socket)',
        '',
        ...targetLines,
        '',
      ].join('\n');
      console.log(`\n${report}`);
      const reportPath =
        options.reportPath ?? fileURLToPath(new URL('../results/postgres.md', import.meta.url));
      mkdirSync(dirname(reportPath), { recursive: true });
      writeFileSync(reportPath, report);
      console.log(`report written to ${reportPath}`);
      return report;
    } finally {
      await server.close();
    }
  } finally {
    process.off('exit', stopCluster);
    stopCluster();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runPostgresStorageBench();
}
