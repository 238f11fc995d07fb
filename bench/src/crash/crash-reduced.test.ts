// The crash trials reduced to a few per scenario and signal, for `pnpm check`: the same machinery
// as `bench:crash` (real child processes interrupted at random moments, then resumed), not the
// provider-level writer kills of provider-json's and provider-sqlite's own crash tests.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCrashTrials } from '../crash-trials.js';
import { barMet } from './report.js';
import { trialFailed } from './trial.js';

/** Trials per provider of every scenario and signal: 2 providers × 2 = 4 per scenario and signal. */
const trialsPerProvider = 2;

/** The report is written, as by the full command, then removed: the committed results stay the full run's. */
const reportPath = join(tmpdir(), `crewline-crash-reduced-${process.pid}.md`);
afterAll(() => rmSync(reportPath, { force: true }));

describe('crash trials, reduced', () => {
  it('SIGKILL, SIGINT and SIGTERM of a crew and a flow on both providers: resumable, identical, no repeated call', async () => {
    const summaries = await runCrashTrials({
      trials: trialsPerProvider,
      // A shorter simulated latency keeps the runs short; the signals still land anywhere in them.
      latencyMs: 20,
      referenceRuns: 1,
      print: false,
      reportPath,
    });
    expect(summaries).toHaveLength(12);
    const failures = summaries.flatMap((summary) =>
      summary.results
        .filter(trialFailed)
        .map(
          (result) =>
            `${result.scenario} SIG${result.signal} ${result.provider} trial ${result.index}: ${[result.unresumable, result.mismatch, ...result.anomalies].filter(Boolean).join('; ')} (files: ${summary.kept.join(', ')})`,
        ),
    );
    expect(failures).toEqual([]);
    expect(summaries.every((summary) => barMet(summary.results))).toBe(true);

    // Calls paid twice are computed from the answers the interrupted process logged as they arrived:
    // the log must have seen answers arrive, every checkpointed answer among them (else the trial
    // would have failed above), and the checkpointed part of the calls paid twice is exactly the
    // repeated checkpointed calls.
    const results = summaries.flatMap((summary) => summary.results);
    expect(results.reduce((total, result) => total + result.calls.arrived, 0)).toBeGreaterThan(0);
    for (const { calls } of results) {
      expect(calls.arrived).toBeGreaterThanOrEqual(calls.checkpointed);
      expect(calls.paidTwice.length - calls.paidTwiceUncheckpointed.length).toBe(calls.repeated.length);
    }
    expect(readFileSync(reportPath, 'utf8')).toContain(
      'calls paid twice whose answer had arrived (checkpointed / not)',
    );
  });
});
