// The run-overhead bench reduced to one small round, for `pnpm check`: the same machinery as
// `bench:overhead` (each run one kickoff in a fresh compiled child process, the variants
// interleaved), checked for what it measured — never for how fast.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runOverheadBench } from '../run-overhead.js';

/** The report is written, as by the full command, then removed: the committed results stay the full run's. */
const reportPath = join(tmpdir(), `crewline-overhead-reduced-${process.pid}.md`);
afterAll(() => rmSync(reportPath, { force: true }));

describe('run overhead, reduced', () => {
  it('measures a cold kickoff of each variant in its own process and reports every row', async () => {
    const { ratios, report } = await runOverheadBench({
      tasks: 2,
      runs: 1,
      latencies: [0],
      probeRounds: 2,
      print: false,
      reportPath,
    });
    expect(readFileSync(reportPath, 'utf8')).toBe(`${report}\n`);
    const ratio = ratios.get(0)!;
    expect(Number.isFinite(ratio.sqlite) && ratio.sqlite > 0).toBe(true);
    expect(Number.isFinite(ratio.json) && ratio.json > 0).toBe(true);
    for (const variant of ['sqlite-groups', 'sqlite-full', 'sqlite-full-groups'] as const)
      expect(Number.isFinite(ratio[variant]) && ratio[variant] > 0, variant).toBe(true);
    // Two tasks: four model calls and every recorded event checkpointed on both providers.
    expect(report).toMatch(/4 model calls, (\d+) events and \1 checkpoints per checkpointed run/);
    const rows = report.split('\n').filter((line) => line.startsWith('| 0 ms |'));
    expect(rows.map((row) => row.split(' | ')[1])).toEqual([
      'no checkpointing',
      "'*' on SqliteProvider (default: a commit per checkpoint)",
      "'*' on SqliteProvider, `groupCommit: true`",
      "'*' on SqliteProvider, `synchronous: 'full'`",
      "'*' on SqliteProvider, `synchronous: 'full'`, `groupCommit: true`",
      "'*' on JsonProvider",
    ]);
    // The barrier probe: a row per shape of group (2 and 6 files, 50 and 375 KB each).
    const probeRows = report
      .split('\n')
      .filter((line) => /^\| [26] \| (50|375) KB \| [\d.]+ ms \|$/.test(line));
    expect(probeRows).toHaveLength(4);
  });
});
