// Whole-process times of the `crewline` command: what a person waits for at the terminal, node
// start-up and module loading included. Run alone: node --conditions=@crewline/source --import tsx src/cli-bench.ts
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { formatMs, markdownTable, summarize } from './bench-statistics.js';
import { TASKS_PER_RUN, writeCrewCheckpoints } from './cli-bench-checkpoints.js';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const cliSource = join(repository, 'packages/cli/src/bin.ts');
const cliBuilt = join(repository, 'packages/cli/dist/bin.js');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface CliBenchOptions {
  /** Timed runs per command (after one warm-up run). Default 7. */
  runs?: number;
  /** JSON checkpoints to list. Default 1,000. */
  jsonCheckpoints?: number;
  /** SQLite checkpoints to list. Default 10,000. */
  sqliteCheckpoints?: number;
  /** Where the markdown report is written. Default `bench/results/cli.md`. */
  reportPath?: string;
}

interface Measured {
  command: string;
  mode: string;
  milliseconds: number[];
  outputLines: number;
}

function measure(mode: string, commandLine: string[], cwd: string, args: string[], runs: number): Measured {
  const once = () => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [...commandLine, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const elapsed = performance.now() - started;
    if (result.status !== 0) {
      throw new Error(`crewline ${args.join(' ')} exited ${result.status}: ${result.stderr.slice(0, 500)}`);
    }
    return { elapsed, lines: result.stdout.split('\n').length - 1 };
  };
  const warmUp = once();
  const milliseconds: number[] = [];
  for (let index = 0; index < runs; index += 1) milliseconds.push(once().elapsed);
  return { command: `crewline ${args.join(' ')}`, mode, milliseconds, outputLines: warmUp.lines };
}

/** Measures `crewline --help` and `list` over JSON and SQLite checkpoints; writes bench/results/cli.md. */
export async function runCliBench(options: CliBenchOptions = {}): Promise<string> {
  const runs = options.runs ?? 7;
  const jsonCount = options.jsonCheckpoints ?? 1000;
  const sqliteCount = options.sqliteCheckpoints ?? 10_000;
  const directory = mkdtempSync(join(tmpdir(), 'crewline-cli-bench-'));
  try {
    const generation = performance.now();
    const json = new JsonProvider({ fsync: false });
    await writeCrewCheckpoints(json, join(directory, 'json-checkpoints'), jsonCount);
    const sqlite = new SqliteProvider();
    await writeCrewCheckpoints(sqlite, join(directory, 'checkpoints.db'), sqliteCount);
    await sqlite.close?.();
    console.log(
      `wrote ${jsonCount} JSON and ${sqliteCount} SQLite checkpoints in ${formatMs(performance.now() - generation)} ms`,
    );

    const modes: { mode: string; commandLine: string[] }[] = [
      {
        mode: 'source (tsx)',
        commandLine: ['--conditions=@crewline/source', '--import', tsxLoader, cliSource],
      },
    ];
    const built =
      existsSync(cliBuilt) && existsSync(join(repository, 'packages/runtime-state/dist/index.js'));
    if (built) modes.push({ mode: 'built (dist)', commandLine: [cliBuilt] });
    const results: Measured[] = [];
    const node = measure('node -e ""', ['-e', ''], directory, [], runs);
    results.push({ ...node, command: '(node start-up alone)' });
    for (const { mode, commandLine } of modes) {
      results.push(measure(mode, commandLine, directory, ['--help'], runs));
      results.push(measure(mode, commandLine, directory, ['list', 'json-checkpoints'], runs));
      results.push(measure(mode, commandLine, directory, ['list', 'checkpoints.db'], runs));
      results.push(measure(mode, commandLine, directory, ['info', 'checkpoints.db'], runs));
    }
    for (const result of results) {
      if (result.command.includes('list json') && result.outputLines !== jsonCount + 3) {
        throw new Error(`list printed ${result.outputLines} lines for ${jsonCount} JSON checkpoints`);
      }
      if (result.command.includes('list checkpoints.db') && result.outputLines !== sqliteCount + 3) {
        throw new Error(`list printed ${result.outputLines} lines for ${sqliteCount} SQLite checkpoints`);
      }
    }
    const rows = results.map((result) => {
      const summary = summarize(result.milliseconds);
      return [
        `\`${result.command}\``,
        result.mode,
        formatMs(summary.median),
        formatMs(Math.min(...result.milliseconds)),
        formatMs(summary.max),
        String(result.outputLines),
      ];
    });
    const report = [
      '# crewline CLI: whole-process times',
      '',
      `Generated by \`bench/src/cli-bench.ts\` on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}).`,
      `Each command ran once to warm up, then ${runs} times; times are wall-clock milliseconds of the`,
      'whole process (node start-up, module loading, reading the checkpoints, printing), output to a pipe.',
      `Locations: ${jsonCount} JSON checkpoint files; a SQLite database of ${sqliteCount} checkpoints`,
      `(written by real crew runs of ${TASKS_PER_RUN} tasks on the offline model, a checkpoint per completed task;`,
      'every tenth run forks the run before after its fifth task onto a branch of its own).',
      '',
      markdownTable(['command', 'mode', 'median ms', 'min ms', 'max ms', 'output lines'], rows),
      '',
      built
        ? '`built (dist)` runs `packages/cli/dist/bin.js`, what `npm install @crewline/cli` gives a user.'
        : 'Only the source mode was measured: build first (`pnpm build`) to measure `packages/cli/dist/bin.js` too.',
      '`source (tsx)` is `pnpm crewline`: TypeScript compiled on the fly by tsx (cached after the first run).',
      '',
    ].join('\n');
    const reportPath = options.reportPath ?? fileURLToPath(new URL('../results/cli.md', import.meta.url));
    mkdirSync(dirname(reportPath), { recursive: true });
    writeFileSync(reportPath, report);
    console.log(report);
    return report;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCliBench();
