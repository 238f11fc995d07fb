// Crash trials (SPEC §8): SIGKILL at uniformly random moments of a crew run checkpointing on '*',
// per provider, then a resume in a new process; counts unresumable states, torn files, differing
// outputs and repeated model calls for checkpointed completions. See crash/ for the parts.
//   pnpm --filter @crewline/bench bench:crash [--trials 200] [--providers json,sqlite] [--seed N]
//     [--latency 50] [--concurrency 2] [--report bench/results/crash.md]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prepareChildScript } from './crash/child-script.js';
import { limited } from './crash/limited.js';
import { referenceRun } from './crash/reference-run.js';
import { type ProviderSummary, renderReport } from './crash/report.js';
import { RunLength } from './crash/run-length.js';
import type { ProviderName } from './crash/storage-check.js';
import { runTrial, type TrialResult, trialFailed } from './crash/trial.js';

export interface CrashTrialsOptions {
  /** Trials per provider. Default 200 (the SPEC §8 bar). */
  trials?: number;
  /** Providers to try. Default both: `['json', 'sqlite']`. */
  providers?: ProviderName[];
  /** Seed of the kill delays. Default: drawn at random (and printed in the report). */
  seed?: number;
  /** Simulated model latency per call, in milliseconds. Default 50. */
  latencyMs?: number;
  /** Trials run at once. Default 2 (the machine has two cores). */
  concurrency?: number;
  /** Uninterrupted runs made first (their wall times start the run-length estimate). Default 4. */
  referenceRuns?: number;
  /** Where the markdown report goes. Default `bench/results/crash.md`. */
  reportPath?: string;
}

const defaults = { trials: 200, latencyMs: 50, concurrency: 2, referenceRuns: 4 };

/** A small seeded generator (mulberry32): the same seed puts the kills at the same fractions of a run. */
function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** The command that reruns these trials (the options given, and the trial count always). */
function commandLine(trials: number, input: CrashTrialsOptions): string {
  const parts = ['pnpm --filter @crewline/bench bench:crash', `--trials ${trials}`];
  if (input.providers) parts.push(`--providers ${input.providers.join(',')}`);
  if (input.seed !== undefined) parts.push(`--seed ${input.seed}`);
  if (input.latencyMs !== undefined) parts.push(`--latency ${input.latencyMs}`);
  if (input.concurrency !== undefined) parts.push(`--concurrency ${input.concurrency}`);
  return parts.join(' ');
}

/** Runs the crash trials, prints and writes the report, and returns the results per provider. */
export async function runCrashTrials(input: CrashTrialsOptions = {}): Promise<ProviderSummary[]> {
  const trials = input.trials ?? defaults.trials;
  const latencyMs = input.latencyMs ?? defaults.latencyMs;
  const concurrency = input.concurrency ?? defaults.concurrency;
  const seed = input.seed ?? Math.floor(Math.random() * 2 ** 31);
  const providers = input.providers ?? ['json', 'sqlite'];
  const loadBefore = loadavg()[0]!;
  const random = randomSource(seed);
  const scratch = mkdtempSync(join(tmpdir(), 'crewline-crash-'));
  const script = await prepareChildScript(fileURLToPath(new URL('./crash/crash-child.ts', import.meta.url)));
  const summaries: ProviderSummary[] = [];
  try {
    for (const provider of providers) {
      const started = performance.now();
      const reference = await referenceRun(provider, script, {
        latencyMs,
        runs: input.referenceRuns ?? defaults.referenceRuns,
        concurrency,
        scratch,
      });
      // Where in the run each kill lands, as a fraction of the run's length at the time of the trial.
      const fractions = Array.from({ length: trials }, () => random());
      const runLength = new RunLength(reference.wallTimesMs);
      let done = 0;
      const kept: string[] = [];
      const results = await limited<TrialResult>(
        concurrency,
        fractions.map((fraction, index) => async () => {
          const directory = join(scratch, `${provider}-${index}`);
          mkdirSync(directory, { recursive: true });
          const result = await runTrial({
            provider,
            index,
            delayMs: fraction * runLength.current(),
            resumeHow: index % 2 === 0 ? 'continue' : 'rebuild',
            latencyMs,
            directory,
            script,
            reference,
            resumeTimeoutMs: 60_000,
          });
          for (const wallMs of result.wholeRunsMs) runLength.add(wallMs);
          if (trialFailed(result)) kept.push(directory);
          else rmSync(directory, { recursive: true, force: true });
          done += 1;
          if (done % 25 === 0 || done === trials)
            process.stderr.write(`crash trials: ${provider} ${done}/${trials}\n`);
          return result;
        }),
      );
      summaries.push({
        provider,
        results,
        referenceMs: reference.durationMs,
        referenceCheckpoints: reference.checkpoints,
        runLengthsMs: runLength.used,
        wallMs: performance.now() - started,
        kept,
      });
    }
  } finally {
    script.dispose();
  }
  const report = renderReport(summaries, {
    command: commandLine(trials, input),
    seed,
    latencyMs,
    concurrency,
    loadBefore,
    childStart: script.how === 'bundled' ? 'compiled once with esbuild' : 'run through tsx',
  });
  console.log(report);
  const reportPath =
    input.reportPath ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'crash.md');
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${report}\n`);
  // Failed trials keep their files (the state the kill left, both call logs) for reproduction.
  if (summaries.every((summary) => summary.kept.length === 0))
    rmSync(scratch, { recursive: true, force: true });
  else console.log(`\nFiles of failed trials are kept under ${scratch}`);
  return summaries;
}

/**
 * Reads `--trials N`, `--providers json,sqlite`, `--seed N`, `--latency MS`, `--concurrency N`,
 * `--report PATH`.
 */
export function parseCrashArguments(argv: readonly string[]): CrashTrialsOptions {
  const options: CrashTrialsOptions = {};
  for (let index = 0; index < argv.length; index += 1) {
    const [flag, inline] = argv[index]!.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++index] ?? '';
    const number = (name: string) => {
      const parsed = Number(value());
      if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`${name} needs a non-negative number`);
      return parsed;
    };
    if (flag === '--trials') options.trials = Math.floor(number('--trials'));
    else if (flag === '--seed') options.seed = Math.floor(number('--seed'));
    else if (flag === '--latency') options.latencyMs = number('--latency');
    else if (flag === '--report') options.reportPath = value();
    else if (flag === '--concurrency') options.concurrency = Math.max(1, Math.floor(number('--concurrency')));
    else if (flag === '--providers') {
      const names = value().split(',');
      if (names.some((name) => name !== 'json' && name !== 'sqlite'))
        throw new Error('--providers takes json, sqlite or json,sqlite');
      options.providers = names as ProviderName[];
    } else if (flag !== '--') throw new Error(`unknown option ${flag}; see the head of crash-trials.ts`);
  }
  return options;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runCrashTrials(parseCrashArguments(process.argv.slice(2)));
}
