// A reduced run of the CLI benchmark, so it cannot rot: its checkpoints come from real crew runs,
// and every command it times must exit 0 on them (`crewline info` once rejected the benchmark's
// hand-made crew data after the checkpoint validation grew stricter). No timing is asserted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliBench } from './cli-bench.js';
import { writeCrewCheckpoints } from './cli-bench-checkpoints.js';

const directory = mkdtempSync(join(tmpdir(), 'crewline-cli-bench-test-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the CLI benchmark checkpoints', () => {
  it('writes exactly the number asked, with a forked branch every tenth run', async () => {
    const provider = new SqliteProvider();
    const location = join(directory, 'count.db');
    const forks = await writeCrewCheckpoints(provider, location, 100);
    const listed = await provider.list(location);
    await provider.close?.();
    expect(listed).toHaveLength(100);
    expect(forks).toBe(1);
    expect(new Set(listed.map((checkpoint) => checkpoint.branch))).toEqual(new Set(['main', 'experiment-9']));
  });
});

describe('bench/src/cli-bench.ts, reduced', () => {
  it('times every command on its checkpoints, each exiting 0, and writes the report', async () => {
    const reportPath = join(directory, 'cli.md');
    await runCliBench({ runs: 1, jsonCheckpoints: 12, sqliteCheckpoints: 25, reportPath });
    const report = readFileSync(reportPath, 'utf8');
    for (const command of [
      'crewline --help',
      'crewline list json-checkpoints',
      'crewline list checkpoints.db',
      'crewline info checkpoints.db',
    ])
      expect(report).toContain(`\`${command}\``);
  });
});
