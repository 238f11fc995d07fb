// The uninterrupted run every trial is compared with, made by the same child script.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCallLog, requestsOf } from './call-log.js';
import { type ChildScript, startChild } from './child-script.js';
import { differingTasks, readFinalState } from './final-state.js';
import { limited } from './limited.js';
import type { ScenarioName } from './scenario.js';
import type { ProviderName } from './storage-check.js';
import type { ReferenceRun } from './trial.js';

export interface ReferenceOptions {
  latencyMs: number;
  /** Uninterrupted runs to make. */
  runs: number;
  /** Runs at once: as many as trials run at once, so that their wall times compare. */
  concurrency: number;
  /** A directory to run them in. */
  scratch: string;
}

/** Runs the scenario uninterrupted a few times: its output, its requests, and every run's wall time. */
export async function referenceRun(
  scenario: ScenarioName,
  provider: ProviderName,
  script: ChildScript,
  options: ReferenceOptions,
): Promise<ReferenceRun & { wallTimesMs: number[] }> {
  const runs = await limited(
    options.concurrency,
    Array.from({ length: options.runs }, (_, run) => async () => {
      const directory = join(options.scratch, `reference-${scenario}-${provider}-${run}`);
      mkdirSync(directory, { recursive: true });
      const location = join(directory, provider === 'json' ? 'checkpoints' : 'checkpoints.db');
      const callLog = join(directory, 'calls.jsonl');
      const args = ['run', scenario, provider, location, callLog, String(options.latencyMs)];
      const end = await startChild(script, args).ended;
      if (end.code !== 0)
        throw new Error(`the uninterrupted ${scenario} ${provider} run failed: ${end.stderr}`);
      const entries = readCallLog(callLog);
      return {
        wallMs: end.wallMs,
        output: (JSON.parse(end.stdout.trim().split('\n').at(-1)!) as { output: string }).output,
        taskOutputs: (await readFinalState(scenario, provider, location)).taskOutputs,
        keys: requestsOf(entries).map((request) => request.key),
        checkpoints: entries.filter((entry) => entry.kind === 'write-finished').length,
      };
    }),
  );
  const first = runs[0]!;
  // Comparing outputs rests on the run being deterministic: check it here.
  for (const run of runs) {
    if (
      run.output !== first.output ||
      run.keys.join() !== first.keys.join() ||
      differingTasks(run.taskOutputs, first.taskOutputs).length > 0
    ) {
      throw new Error(
        `two uninterrupted ${scenario} ${provider} runs differ; the trials cannot compare outputs`,
      );
    }
  }
  const wallTimesMs = runs.map((run) => run.wallMs);
  return {
    output: first.output,
    taskOutputs: first.taskOutputs,
    keys: new Set(first.keys),
    checkpoints: first.checkpoints,
    durationMs: [...wallTimesMs].sort((a, b) => a - b)[Math.floor(wallTimesMs.length / 2)]!,
    wallTimesMs,
  };
}
