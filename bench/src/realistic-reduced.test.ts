// A reduced run of bench:realistic, so the benchmark cannot rot: tiny crew and flow runs with both
// peers, a small restore database, the whole report. No timing is asserted: only that every
// checkpoint was timed end to end and at the provider, that the peers were fed a state per
// (sampled) checkpoint, and that the report holds every table.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRealisticBench } from './realistic-bench.js';
import { COMMON_LICENSES, proseSource } from './scenario/real-prose.js';

const directory = mkdtempSync(join(tmpdir(), 'crewline-realistic-test-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the realistic text source', () => {
  it('slices the same text for a seed, other text for another, of the size asked', () => {
    const source = proseSource();
    expect(source.slice(7, 2048)).toBe(source.slice(7, 2048));
    expect(source.slice(7, 2048)).toHaveLength(2048);
    expect(source.slice(8, 2048)).not.toBe(source.slice(7, 2048));
    if (existsSync(COMMON_LICENSES)) expect(source.description).toContain(COMMON_LICENSES);
  });

  it('falls back to generated prose, and says so, where the directory is missing', () => {
    const source = proseSource(join(directory, 'no-such-directory'));
    expect(source.description).toContain('generated');
    expect(source.slice(3, 500)).toHaveLength(500);
  });
});

describe('bench:realistic, reduced', () => {
  it('times every checkpoint, feeds the peers a state per checkpoint and writes the whole report', async () => {
    const reportPath = join(directory, 'realistic.md');
    const { results, restore } = await runRealisticBench({
      variants: [
        { label: 'crew, 3 tasks', shape: 'crew', tasks: 3, rounds: 2 },
        { label: 'crew, 3 tasks, in groups', shape: 'crew', tasks: 3, groupCommit: true },
        { label: 'flow of 10 one-task crews', shape: 'flow', tasks: 10, peerEvery: 4 },
      ],
      restoreCheckpoints: 120,
      restoreTasksPerRun: 3,
      reportPath,
      print: false,
    });
    for (const result of results) {
      // Two runs of the crew, pooled: the same checkpoints each time.
      expect(result.rounds).toBe(result.variant.rounds ?? 1);
      const checkpoints = result.endToEndMs.length / result.rounds;
      // Ten events a task at least (three model turns, two tool calls): a checkpoint on each.
      expect(checkpoints).toBeGreaterThanOrEqual(10 * result.variant.tasks);
      expect(result.providerMs).toHaveLength(checkpoints * result.rounds);
      // The floor: SQLite alone for the rows of each checkpoint (cost/sqlite-floor.ts).
      expect(result.floorMs).toHaveLength(checkpoints * result.rounds);
      // Each checkpoint is charged its share of the commit that stored it, and taking it on top.
      for (const [index, share] of result.providerMs.entries())
        expect(result.endToEndMs[index]).toBeGreaterThanOrEqual(share);
      // Group commit: the checkpoints of the events between two calls share one commit; by default
      // each has its own.
      if (result.variant.groupCommit === true) expect(result.checkpointsPerCommit).toBeGreaterThan(1.5);
      else expect(result.checkpointsPerCommit).toBe(1);
      expect(result.peers.map((peer) => peer.name)).toEqual([
        'LangGraph SqliteSaver.put',
        'Mastra LibSQLStore.persistWorkflowSnapshot',
      ]);
      for (const peer of result.peers) {
        expect(peer.putMs).toHaveLength(
          Math.ceil(checkpoints / (result.variant.peerEvery ?? 1)) * result.rounds,
        );
        expect(peer.storedBytes).toBeGreaterThan(0);
      }
      expect(result.finalBytes).toBeGreaterThan(result.variant.tasks * 2048);
      expect(result.closedBytes).toBeGreaterThan(0);
      expect(result.modelCalls).toBe(3 * result.variant.tasks);
    }
    expect(restore!.checkpoints).toBeGreaterThanOrEqual(120);
    // Each timed restore reported how long its load took.
    expect(restore!.fromCheckpointLoadMs.count).toBe(restore!.fromCheckpointMs.count);
    // The read with every event was timed in the same rounds.
    expect(restore!.providerReadWithEventsMs.count).toBe(restore!.fromCheckpointMs.count);
    const report = readFileSync(reportPath, 'utf8');
    expect(report.match(/^\| --- \|/gm)).toHaveLength(4);
    expect(report).toContain('Against the targets:');
  });
});
