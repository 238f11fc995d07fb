// Fuzz suite (SPEC §8 "Bad input", issue #9): thousands of seeded hostile checkpoint files and
// damaged SQLite databases, made from real checkpoints, fed through every reader; counts the cases
// by class and outcome and writes bench/results/fuzz.md. See fuzz/ for the parts.
//   pnpm --filter @crewline/bench bench:fuzz [--seed N] [--cases 4500] [--database-cases 1400]
//     [--resume-share 0.1] [--case json:N|database:N] [--report bench/results/fuzz.md]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type LogLevel, setLogSink } from '@crewline/events';
import type { CaseResult } from './fuzz/case-result.js';
import { runDatabaseCase } from './fuzz/database-case.js';
import { databaseDamages } from './fuzz/database-damage.js';
import { renderFuzzReport } from './fuzz/fuzz-report.js';
import { runJsonCase } from './fuzz/json-case.js';
import { jsonMutations } from './fuzz/json-mutations.js';
import { pick } from './fuzz/random-tools.js';
import { scratchDirectory } from './fuzz/scratch-directory.js';
import { prepareSeedMaterial } from './fuzz/seed-material.js';
import { caseRandom, randomSeed } from './random-source.js';

export interface FuzzOptions {
  /** Seed of every case. Default: drawn at random (and printed). */
  seed?: number;
  /** Hostile checkpoint files. Default 4,500 (500 per class). */
  cases?: number;
  /** Damaged databases. Default 1,400 (200 per class). */
  databaseCases?: number;
  /** Share of loaded checkpoint files also resumed to the end. Default 0.1. */
  resumeShare?: number;
  /** Run this one case only (`json:17`, `database:3`), to replay a failure. Default: all. */
  only?: { suite: 'json' | 'database'; index: number };
  /** Where the markdown report goes. Default `bench/results/fuzz.md` (none when replaying one case). */
  reportPath?: string;
  /** Print the report and the progress. Default true. */
  print?: boolean;
}

export interface FuzzRun {
  seed: number;
  json: CaseResult[];
  database: CaseResult[];
  report: string;
}

const defaults = { cases: 4500, databaseCases: 1400, resumeShare: 0.1 };
/** Database cases draw from a stream of their own, so that changing one count leaves the other suite's cases alone. */
const databaseStream = 0x5bd1e995;

function commandLine(input: FuzzOptions, seed: number): string {
  const parts = ['pnpm --filter @crewline/bench bench:fuzz', `--seed ${seed}`];
  if (input.cases !== undefined) parts.push(`--cases ${input.cases}`);
  if (input.databaseCases !== undefined) parts.push(`--database-cases ${input.databaseCases}`);
  if (input.resumeShare !== undefined) parts.push(`--resume-share ${input.resumeShare}`);
  if (input.only) parts.push(`--case ${input.only.suite}:${input.only.index}`);
  return parts.join(' ');
}

function indexes(count: number, suite: 'json' | 'database', only: FuzzOptions['only']): number[] {
  if (only) return only.suite === suite ? [only.index] : [];
  return Array.from({ length: count }, (_, index) => index);
}

/** Runs the fuzz suite, prints and writes the report. */
export async function runFuzzSuite(input: FuzzOptions = {}): Promise<FuzzRun> {
  const started = performance.now();
  const seed = input.seed ?? randomSeed();
  const print = input.print ?? true;
  const resumeShare = input.resumeShare ?? defaults.resumeShare;
  const loadBefore = loadavg()[0]!;
  if (print) process.stderr.write(`fuzz: seed ${seed}\n`);
  // Hostile files make the readers warn by design (a listing skips a file it cannot read): the
  // records are counted for the report rather than printed thousands of times.
  const logRecords: Record<LogLevel, number> = { debug: 0, info: 0, warn: 0, error: 0 };
  setLogSink((record) => {
    logRecords[record.level] += 1;
  });
  const material = await prepareSeedMaterial();
  const seedsDone = performance.now();
  const scratch = scratchDirectory('crewline-fuzz-');
  const progress = (suite: string, done: number, total: number) => {
    if (print && (done % 500 === 0 || done === total))
      process.stderr.write(`fuzz: ${suite} ${done}/${total}\n`);
  };
  const json: CaseResult[] = [];
  const database: CaseResult[] = [];
  try {
    const jsonIndexes = indexes(input.cases ?? defaults.cases, 'json', input.only);
    for (const index of jsonIndexes) {
      const random = caseRandom(seed, index);
      const seedCheckpoint = pick(random, material.checkpoints);
      json.push(
        await runJsonCase({
          index,
          mutation: jsonMutations[index % jsonMutations.length]!,
          seed: seedCheckpoint,
          resume: random() < resumeShare,
          random,
          root: join(scratch, `json-${index}`),
          forbidden: material.runLocations,
        }),
      );
      progress('checkpoint files', json.length, jsonIndexes.length);
    }
    const jsonDone = performance.now();
    const databaseIndexes = indexes(input.databaseCases ?? defaults.databaseCases, 'database', input.only);
    for (const index of databaseIndexes) {
      database.push(
        await runDatabaseCase({
          index,
          damage: databaseDamages[index % databaseDamages.length]!,
          database: material.database,
          document: material.document,
          random: caseRandom(seed ^ databaseStream, index),
          root: join(scratch, `database-${index}`),
          forbidden: material.runLocations,
        }),
      );
      progress('databases', database.length, databaseIndexes.length);
    }
    const report = renderFuzzReport(json, database, {
      command: commandLine(input, seed),
      seed,
      jsonClasses: jsonMutations,
      databaseClasses: databaseDamages,
      seedFiles: material.checkpoints.length,
      seedDatabaseBytes: material.database.length,
      resumeShare,
      wallMs: {
        seeds: seedsDone - started,
        json: jsonDone - seedsDone,
        database: performance.now() - jsonDone,
        total: performance.now() - started,
      },
      loadBefore,
      logRecords,
      failuresListed: 25,
    });
    if (print) console.log(report);
    // A replayed case is not a run of the suite: it leaves the results page alone unless told.
    const reportPath =
      input.reportPath ??
      (input.only ? undefined : join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'fuzz.md'));
    if (reportPath !== undefined) {
      mkdirSync(dirname(reportPath), { recursive: true });
      writeFileSync(reportPath, `${report}\n`);
    }
    return { seed, json, database, report };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Reads `--seed N`, `--cases N`, `--database-cases N`, `--resume-share X`, `--case SUITE:N`, `--report PATH`. */
export function parseFuzzArguments(argv: readonly string[]): FuzzOptions {
  const options: FuzzOptions = {};
  for (let index = 0; index < argv.length; index += 1) {
    const [flag, inline] = argv[index]!.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++index] ?? '';
    const number = (name: string) => {
      const parsed = Number(value());
      if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`${name} needs a non-negative number`);
      return parsed;
    };
    if (flag === '--seed') options.seed = Math.floor(number('--seed'));
    else if (flag === '--cases') options.cases = Math.floor(number('--cases'));
    else if (flag === '--database-cases') options.databaseCases = Math.floor(number('--database-cases'));
    else if (flag === '--resume-share') options.resumeShare = Math.min(1, number('--resume-share'));
    else if (flag === '--report') options.reportPath = value();
    else if (flag === '--case') {
      const match = /^(json|database):(\d+)$/.exec(value());
      if (!match) throw new Error('--case takes json:N or database:N');
      options.only = { suite: match[1] as 'json' | 'database', index: Number(match[2]) };
    } else if (flag !== '--') throw new Error(`unknown option ${flag}; see the head of fuzz-suite.ts`);
  }
  return options;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runFuzzSuite(parseFuzzArguments(process.argv.slice(2)));
}
