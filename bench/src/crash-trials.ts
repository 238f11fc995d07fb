// Crash trials (SPEC §8, issue #9): SIGKILL, SIGINT and SIGTERM at uniformly random moments of a
// crew run and of a flow run checkpointing on '*', per provider, then a resume in a new process;
// counts unresumable states, torn files, differing outputs, repeated model calls for checkpointed
// completions and processes that did not end after a signal. See crash/ for the parts.
//   pnpm --filter @crewline/bench bench:crash [--scenario crew,flow] [--signal KILL,INT,TERM]
//     [--trials N] [--providers json,sqlite] [--seed N] [--latency 50] [--concurrency 2]
//     [--report bench/results/crash.md]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prepareChildScript } from './crash/child-script.js';
import { limited } from './crash/limited.js';
import { referenceRun } from './crash/reference-run.js';
import { type CombinationSummary, renderReport } from './crash/report.js';
import { RunLength } from './crash/run-length.js';
import {
  parseNames,
  type ScenarioName,
  type SignalName,
  scenarioNames,
  signalNames,
} from './crash/scenario.js';
import type { ProviderName } from './crash/storage-check.js';
import { runTrial, type TrialResult, trialFailed } from './crash/trial.js';
import { randomSeed, randomSource } from './random-source.js';

export interface CrashTrialsOptions {
  /** Scenarios to run. Default both: `['crew', 'flow']`. */
  scenarios?: ScenarioName[];
  /** Signals to send. Default all three: `['KILL', 'INT', 'TERM']`. */
  signals?: SignalName[];
  /** Trials per provider of every scenario and signal. Default: {@link defaultTrials}. */
  trials?: number;
  /** Providers to try. Default both: `['json', 'sqlite']`. */
  providers?: ProviderName[];
  /** Seed of the signal delays. Default: drawn at random (and printed in the report). */
  seed?: number;
  /** Simulated model latency per call, in milliseconds. Default 50. */
  latencyMs?: number;
  /** Trials run at once. Default 2 (the machine has two cores). */
  concurrency?: number;
  /** Uninterrupted runs made first per scenario and provider (they start the run-length estimate). Default 4. */
  referenceRuns?: number;
  /** How long a process may live after SIGINT/SIGTERM before it counts as not ending. Default 10 s. */
  endDeadlineMs?: number;
  /** Where the markdown report goes. Default `bench/results/crash.md`. */
  reportPath?: string;
  /** Print the report and the progress. Default true. */
  print?: boolean;
}

const defaults = { latencyMs: 50, concurrency: 2, referenceRuns: 4, endDeadlineMs: 10_000 };

/**
 * Trials per provider when `--trials` is not given: the SPEC §8 bar (200) for SIGKILL of the crew,
 * which the bar names; 50 for each other scenario and signal, so that all twelve combinations run in
 * about ten minutes on the project's 2-core machine.
 */
export function defaultTrials(scenario: ScenarioName, signal: SignalName): number {
  return scenario === 'crew' && signal === 'KILL' ? 200 : 50;
}

/** The command that reruns these trials (the options given). */
function commandLine(input: CrashTrialsOptions): string {
  const parts = ['pnpm --filter @crewline/bench bench:crash'];
  if (input.scenarios) parts.push(`--scenario ${input.scenarios.join(',')}`);
  if (input.signals) parts.push(`--signal ${input.signals.join(',')}`);
  if (input.trials !== undefined) parts.push(`--trials ${input.trials}`);
  if (input.providers) parts.push(`--providers ${input.providers.join(',')}`);
  if (input.seed !== undefined) parts.push(`--seed ${input.seed}`);
  if (input.latencyMs !== undefined) parts.push(`--latency ${input.latencyMs}`);
  if (input.concurrency !== undefined) parts.push(`--concurrency ${input.concurrency}`);
  return parts.join(' ');
}

/** Runs the crash trials, prints and writes the report, and returns the results per combination. */
export async function runCrashTrials(input: CrashTrialsOptions = {}): Promise<CombinationSummary[]> {
  const commandStarted = performance.now();
  const latencyMs = input.latencyMs ?? defaults.latencyMs;
  const concurrency = input.concurrency ?? defaults.concurrency;
  const endDeadlineMs = input.endDeadlineMs ?? defaults.endDeadlineMs;
  const seed = input.seed ?? randomSeed();
  const print = input.print ?? true;
  const loadBefore = loadavg()[0]!;
  const random = randomSource(seed);
  const scratch = mkdtempSync(join(tmpdir(), 'crewline-crash-'));
  const script = await prepareChildScript(fileURLToPath(new URL('./crash/crash-child.ts', import.meta.url)));
  const summaries: CombinationSummary[] = [];
  try {
    for (const scenario of input.scenarios ?? scenarioNames) {
      for (const provider of input.providers ?? ['json', 'sqlite']) {
        let started = performance.now();
        const reference = await referenceRun(scenario, provider, script, {
          latencyMs,
          runs: input.referenceRuns ?? defaults.referenceRuns,
          concurrency,
          scratch,
        });
        const runLength = new RunLength(reference.wallTimesMs);
        for (const signal of input.signals ?? signalNames) {
          const trials = input.trials ?? defaultTrials(scenario, signal);
          const name = `${scenario}-${signal}-${provider}`;
          // Where in the run each signal lands, as a fraction of the run's length at the time of the trial.
          const fractions = Array.from({ length: trials }, () => random());
          const estimatesBefore = runLength.used.length;
          let done = 0;
          const kept: string[] = [];
          const results = await limited<TrialResult>(
            concurrency,
            fractions.map((fraction, index) => async () => {
              const directory = join(scratch, `${name}-${index}`);
              mkdirSync(directory, { recursive: true });
              const result = await runTrial({
                scenario,
                signal,
                provider,
                index,
                delayMs: fraction * runLength.current(),
                resumeHow: index % 2 === 0 ? 'continue' : 'rebuild',
                latencyMs,
                directory,
                script,
                reference,
                endDeadlineMs,
                resumeTimeoutMs: 60_000,
              });
              for (const wallMs of result.wholeRunsMs) runLength.add(wallMs);
              if (trialFailed(result)) kept.push(directory);
              else rmSync(directory, { recursive: true, force: true });
              done += 1;
              if (print && (done % 25 === 0 || done === trials))
                process.stderr.write(`crash trials: ${name} ${done}/${trials}\n`);
              return result;
            }),
          );
          summaries.push({
            scenario,
            signal,
            provider,
            results,
            referenceMs: reference.durationMs,
            referenceCheckpoints: reference.checkpoints,
            runLengthsMs: runLength.used.slice(estimatesBefore),
            wallMs: performance.now() - started,
            kept,
          });
          started = performance.now();
        }
      }
    }
  } finally {
    script.dispose();
  }
  const report = renderReport(summaries, {
    command: commandLine(input),
    seed,
    latencyMs,
    concurrency,
    endDeadlineMs,
    loadBefore,
    childStart: script.how === 'bundled' ? 'compiled once with esbuild' : 'run through tsx',
    totalMs: performance.now() - commandStarted,
  });
  if (print) console.log(report);
  const reportPath =
    input.reportPath ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'crash.md');
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${report}\n`);
  // Failed trials keep their files (the state the signal left, both call logs) for reproduction.
  if (summaries.every((summary) => summary.kept.length === 0))
    rmSync(scratch, { recursive: true, force: true });
  else if (print) console.log(`\nFiles of failed trials are kept under ${scratch}`);
  return summaries;
}

/**
 * Reads `--scenario crew,flow`, `--signal KILL,INT,TERM`, `--trials N`, `--providers json,sqlite`,
 * `--seed N`, `--latency MS`, `--concurrency N`, `--report PATH`.
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
    else if (flag === '--scenario' || flag === '--scenarios')
      options.scenarios = parseNames(value(), scenarioNames, '--scenario');
    else if (flag === '--signal' || flag === '--signals')
      options.signals = parseNames(value().toUpperCase().replaceAll('SIG', ''), signalNames, '--signal');
    else if (flag === '--providers' || flag === '--provider')
      options.providers = parseNames(value(), ['json', 'sqlite'] as const, '--providers');
    else if (flag !== '--') throw new Error(`unknown option ${flag}; see the head of crash-trials.ts`);
  }
  return options;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runCrashTrials(parseCrashArguments(process.argv.slice(2)));
}
