// Runs every benchmark of the repository, one after the other (`pnpm bench` at the root).
// To add one: export an async function that prints its report and list it below, or list its script
// (benches that parse their own command line and write their own report run as child processes).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStorageBench } from './storage-bench.js';

interface Bench {
  name: string;
  run: () => Promise<unknown>;
}

const benches: Bench[] = [{ name: 'storage (crew-50, SPEC §8)', run: () => runStorageBench() }];
benches.push({
  name: 'realistic scenario (what a run pays per checkpoint, issue #13)',
  run: async () => (await import('./realistic-bench.js')).runRealisticBench(),
});
benches.push({
  name: 'checkpoint growth over a 500-task run (issue #13)',
  run: async () => runScript('checkpoint-growth.ts'),
});
benches.push({
  name: "redaction's share of checkpoint time (issue #13)",
  run: async () => runScript('cost/redaction-share.ts'),
});
benches.push({
  name: 'postgres storage (crew-50 beside LangGraph PostgresSaver, SPEC §8)',
  run: async () => (await import('./postgres-storage-bench.js')).runPostgresStorageBench(),
});
benches.push({
  name: 'cli (whole-process times)',
  run: async () => (await import('./cli-bench.js')).runCliBench(),
});
benches.push({
  name: 'run overhead (crew-50, SPEC §8)',
  run: async () => (await import('./run-overhead.js')).runOverheadBench(),
});
benches.push({
  name: 'lineage explorer (10,000 SQLite checkpoints in Chromium, SPEC §11)',
  run: async () => (await import('./explorer-bench.js')).runExplorerBench(),
});
benches.push({
  name: 'crash (kill -9, SPEC §8)',
  run: async () => (await import('./crash-trials.js')).runCrashTrials(),
});

benches.push({
  name: 'fuzz (hostile checkpoints and damaged databases, SPEC §8)',
  run: async () => (await import('./fuzz-suite.js')).runFuzzSuite(),
});

/** Runs a bench script of `src/` in a fresh process, as its package script does; throws if it fails. */
function runScript(script: string): void {
  const path = join(dirname(fileURLToPath(import.meta.url)), script);
  const result = spawnSync(process.execPath, ['--conditions=@crewline/source', '--import', 'tsx', path], {
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error(`bench ${script} exited with ${result.status ?? result.signal}`);
}

for (const bench of benches) {
  console.log(`\n=== ${bench.name} ===\n`);
  await bench.run();
}
