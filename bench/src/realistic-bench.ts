// The realistic benchmark of issue #13, beside crew-50: whole runs on the runtime (3 agents, prose
// answers of ≈2 KB sliced from real text, three model turns per task with two ≈1.5 KB tool results,
// every output kept), checkpointing on '*' to SqliteProvider. For each variant it reports what the
// run pays per checkpoint (taken in its event plus its share of the commit that stored it) and the provider's write alone, with
// LangGraph's SqliteSaver and Mastra's LibSQLStore fed the same states in the same run; medians per
// window of 250 checkpoints; db + WAL against the final checkpoint, open and closed; then restore
// and listing over 10,000 checkpoints beside SqliteSaver.getTuple.
//
//   pnpm --filter @crewline/bench bench:realistic [--variants crew-50,flow-50] [--rounds N]
//     [--restore 10000] [--restore-rounds N] [--restore-directory PATH] [--report PATH]
//   pnpm --filter @crewline/bench bench:realistic --only restore   (restore and listing alone, to
//     results/realistic-restore.md; with --restore-directory the filled stores are kept and reused)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  measureVariant,
  mergeRounds,
  type RealisticVariant,
  type VariantResult,
  WINDOW,
} from './realistic-measure.js';
import {
  costTable,
  REALISTIC_TARGETS,
  restoreTable,
  storageTable,
  verdicts,
  windowTable,
} from './realistic-report.js';
import { measureRestore, type RestoreResult } from './realistic-restore.js';
import { type ProseSource, proseSource } from './scenario/real-prose.js';
import { FLOW_METHODS } from './scenario/realistic-run.js';

/**
 * The variants by name. The 50-task ones run five times, interleaved, for the ratio the targets are
 * about; the 500-task ones three times, so that each window of the growth table pools three runs: a
 * window of one run was at the mercy of whatever else the shared machine did during those seconds (one
 * run's last thousand checkpoints cost 1.8 times its first window; runs of the same code at quieter
 * moments, 0.8 to 1.0 times); the 20 KB one once. At 500 tasks and with 20 KB answers the peers store a sample of the
 * states (every whole): every state of a 500-task run would have SqliteSaver write some 35 GB.
 */
export const REALISTIC_VARIANTS: Record<string, RealisticVariant> = {
  'crew-50': { label: 'crew, 50 tasks', shape: 'crew', tasks: 50, rounds: 5 },
  // The same run with the automatic checkpoints between two calls committed in one transaction.
  'crew-50-groups': {
    label: 'crew, 50 tasks, `groupCommit: true`',
    shape: 'crew',
    tasks: 50,
    rounds: 5,
    groupCommit: true,
  },
  'flow-50': { label: `flow of ${FLOW_METHODS} crews, 50 tasks`, shape: 'flow', tasks: 50, rounds: 5 },
  'crew-500': { label: 'crew, 500 tasks', shape: 'crew', tasks: 500, peerEvery: 20, rounds: 3 },
  'flow-500': {
    label: `flow of ${FLOW_METHODS} crews, 500 tasks`,
    shape: 'flow',
    tasks: 500,
    peerEvery: 20,
    rounds: 3,
  },
  'crew-50-20k': {
    label: 'crew, 50 tasks, 20 KB answers',
    shape: 'crew',
    tasks: 50,
    outputBytes: 20_480,
    peerEvery: 5,
  },
};

export interface RealisticBenchOptions {
  /** Variants to run, in order. Default: every one of {@link REALISTIC_VARIANTS}. */
  variants?: readonly RealisticVariant[];
  /** Checkpoints in the restore and listing database; 0 skips it. Default 10,000. */
  restoreCheckpoints?: number;
  /** Runs of every variant, overriding each variant's `rounds`. Default: the variant's (1 without). */
  rounds?: number;
  /** Tasks per run filling that database. Default 50. */
  restoreTasksPerRun?: number;
  /** Timed restores of each kind, interleaved (a multiple of 24 gives each order of the four as often). Default 24. */
  restoreRounds?: number;
  /**
   * Where the restore database and SqliteSaver's are kept: filled once, reused by later runs asking
   * for the same figures. Default: a temporary directory, removed afterwards.
   */
  restoreDirectory?: string;
  /** Where the markdown report is written. Default `bench/results/realistic.md`. */
  reportPath?: string;
  /** The text source. Default {@link proseSource}(). */
  source?: ProseSource;
  /** Print progress and the report. Default true. */
  print?: boolean;
}

export interface RealisticBenchResult {
  results: VariantResult[];
  restore: RestoreResult | undefined;
  report: string;
}

export async function runRealisticBench(options: RealisticBenchOptions = {}): Promise<RealisticBenchResult> {
  const variants = options.variants ?? Object.values(REALISTIC_VARIANTS);
  const source = options.source ?? proseSource();
  const print = options.print === false ? () => {} : (text: string) => console.log(text);
  const loads: string[] = [];
  const noteLoad = (moment: string) => loads.push(`${moment} ${loadavg()[0]!.toFixed(1)}`);
  noteLoad('start');
  // Round by round, each variant once per round while it has rounds left: a change of load on the
  // shared machine falls on every variant rather than on one.
  const roundsOf = (variant: RealisticVariant) => options.rounds ?? variant.rounds ?? 1;
  const runs: VariantResult[][] = variants.map(() => []);
  const totalRounds = Math.max(...variants.map(roundsOf));
  for (let round = 0; round < totalRounds; round += 1) {
    for (const [index, variant] of variants.entries()) {
      if (round >= roundsOf(variant)) continue;
      print(`measuring ${variant.label}, run ${round + 1} of ${roundsOf(variant)} ...`);
      runs[index]!.push(await measureVariant(variant, source));
    }
    noteLoad(`after round ${round + 1}`);
  }
  const results = runs.map(mergeRounds);
  const restoreCount = options.restoreCheckpoints ?? 10_000;
  let restore: RestoreResult | undefined;
  if (restoreCount > 0) {
    print(`filling ${restoreCount} checkpoints for restore and listing ...`);
    restore = await measureRestore(
      restoreCount,
      source,
      options.restoreTasksPerRun ?? 50,
      options.restoreRounds ?? 24,
      options.restoreDirectory,
    );
    noteLoad('after restore');
  }
  const machine = `Machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; 1-minute load average ${loads.join(', ')} (a shared machine: compare the ratios, measured in one run).`;
  const variantSections =
    results.length === 0
      ? [
          '# Realistic scenario: restore and listing (issue #13)',
          '',
          `Restore and listing alone (\`bench:realistic --only restore\`); the checkpoints come from the same realistic crew runs as in [realistic.md](realistic.md) (3 agents, prose answers of ≈2 KB sliced by seed from ${source.description}, corpus digest ${source.digest}). ${machine}`,
          '',
        ]
      : [
          '# Realistic scenario: what a run pays per checkpoint (issue #13)',
          '',
          `Whole runs on the runtime with the offline model (no latency), checkpointing on every event ('*') to SqliteProvider: 3 agents; each task three model turns (two calls of a search tool returning ≈1.5 KB, then a prose answer of ≈2 KB, or 20 KB where the scenario says so), so the conversation grows inside each task; every output kept (by the crew, or by the flow's state). The flow shape is ${FLOW_METHODS} chained methods, each running a crew of a tenth of the tasks. Text is sliced by seed from ${source.description}, corpus digest ${source.digest}. Peers in the same run, fed each state crewline checkpointed, at the run's next tool call (so their work is never inside a timed crewline checkpoint): LangGraph \`SqliteSaver.put\` (the state as channel values, every checkpoint whole) and Mastra \`LibSQLStore.persistWorkflowSnapshot\` (\`@mastra/libsql\` 0.16.4 on \`@mastra/core\` 0.24.9, the latest snapshot only). "End to end" is what the run pays for each checkpoint: taking it inside its event (snapshot, redaction, and by default the commit itself: \`writeCheckpointSync\`), or with \`groupCommit: true\` taking it (the write handed over: \`writeCheckpoint\`) plus its share of the provider call that stored it — SqliteProvider then commits the automatic checkpoints of the events between two model or tool calls in one transaction (\`writeBatch\`), and a group's time is split evenly among its checkpoints (bench/src/cost/checkpoint-timing.ts; matched by checkpoint id, a failed attempt charged to the checkpoints it held), a model completion's committed inside its event; what is left out is the runtime's report of a group's checkpoints to the run's listeners after the commit, measured at 2–4 µs per checkpoint (in favour of groups). "Provider alone" is that share; the commit column is each commit whole, what the run waits for at a barrier. Runs per scenario as the first column says (several: interleaved round by round, samples pooled). ${machine}`,
          '',
          costTable(results),
          '',
          `Storage against the final checkpoint (target ≤ ${REALISTIC_TARGETS.storagePerFinal}×, open and closed):`,
          '',
          storageTable(results),
          '',
          `Median per window of ${WINDOW} checkpoints, in ms: end to end / provider alone / SqliteSaver.put (a window of sampled peer states holds fewer puts):`,
          '',
          windowTable(results),
          '',
        ];
  const report = [
    ...variantSections,
    ...(restore === undefined
      ? []
      : [
          `Restore and listing: one database of ${restore.checkpoints} checkpoints from ${restore.runs} realistic crew runs (one lineage each; the latest is the end of a ${options.restoreTasksPerRun ?? 50}-task run, ${Math.round(restore.latestBytes / 1024)} KiB), SqliteSaver fed the same states (one thread per run)${restore.reusedStores ? ', both filled by an earlier run of this bench and reused (`--restore-directory`)' : ''}; each store opened afresh, one untimed call of each first, then the four restores interleaved round by round, in every order in turn, the heap collected before each timed call. \`Crew.fromCheckpoint\` reads, validates and rebuilds the crew (the checkpoint's events stay stored lines until the run reads them: a resumed run parses them as it continues); getTuple reads and parses the checkpoint. SqliteSaver has no metadata-only listing (\`list\` yields whole checkpoints), so listing is crewline's alone.`,
          '',
          restoreTable(restore),
          '',
        ]),
    'Against the targets:',
    '',
    ...verdicts(results, restore),
  ].join('\n');
  print(report);
  const reportPath =
    options.reportPath ??
    join(
      dirname(fileURLToPath(import.meta.url)),
      '..',
      'results',
      results.length === 0 ? 'realistic-restore.md' : 'realistic.md',
    );
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${report}\n`);
  return { results, restore, report };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      variants: { type: 'string', default: Object.keys(REALISTIC_VARIANTS).join(',') },
      only: { type: 'string' },
      restore: { type: 'string', default: '10000' },
      'restore-rounds': { type: 'string' },
      'restore-directory': { type: 'string' },
      rounds: { type: 'string' },
      report: { type: 'string' },
    },
  });
  if (values.only !== undefined && values.only !== 'restore')
    throw new Error(`bench:realistic: --only takes "restore", not "${values.only}"`);
  const names = values.only === 'restore' ? [] : values.variants!.split(',');
  const variants = names.map((name) => {
    const variant = REALISTIC_VARIANTS[name];
    if (variant === undefined)
      throw new Error(
        `bench:realistic: unknown variant "${name}"; use ${Object.keys(REALISTIC_VARIANTS).join(', ')}`,
      );
    return variant;
  });
  await runRealisticBench({
    variants,
    restoreCheckpoints: Number(values.restore),
    ...(values.rounds !== undefined ? { rounds: Number(values.rounds) } : {}),
    ...(values['restore-rounds'] !== undefined ? { restoreRounds: Number(values['restore-rounds']) } : {}),
    ...(values['restore-directory'] !== undefined ? { restoreDirectory: values['restore-directory'] } : {}),
    ...(values.report !== undefined ? { reportPath: values.report } : {}),
  });
}
