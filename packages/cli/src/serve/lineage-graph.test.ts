import type { StoredCheckpoint } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { sampleCheckpoints } from '../test-support/sample-tree.js';
import { buildTree } from '../tui/state/tree.js';
import { layoutLineage } from './lineage-graph.js';

function checkpoint(
  id: string,
  parentId: string | null,
  completed: number,
  options: { branch?: string; lineageId?: string } = {},
): StoredCheckpoint {
  return {
    id,
    reference: `memory#${id}`,
    createdAt: `2026-01-01T00:00:${id.padStart(2, '0').slice(-2)}.000Z`,
    lineageId: options.lineageId ?? 'run-main',
    parentId,
    branch: options.branch ?? 'main',
    trigger: 'llm_call_completed',
    entities: [{ kind: 'crew', id: 'crew-1', name: 'Long', status: 'running', completed, total: 3 }],
    eventCount: 1,
  };
}

describe('layoutLineage', () => {
  it('puts each run of a branch on its own lane, forks below their parent starting one column right', async () => {
    const sample = await sampleCheckpoints();
    const graph = layoutLineage(sample.all);
    const research = graph.groups.find((group) => group.name === 'Research')!;
    const lanes = new Map(research.lanes.map((lane) => [lane.branch, lane]));
    expect([...lanes.keys()]).toEqual(['main', 'experiment', 'experiment/deeper', 'orphan']);
    const main = lanes.get('main')!;
    expect(main.nodes.map((node) => node.id)).toEqual(sample.main.map((entry) => entry.id));
    expect(main.nodes.at(-1)!.head).toBe(true);
    expect(main.nodes[2]!.forkPoint).toBe(true);
    const experiment = lanes.get('experiment')!;
    expect(experiment.forkedFrom).toBe(sample.main[2]!.id);
    expect(experiment.nodes[0]!.column).toBe(main.nodes[2]!.column + 1);
    expect(experiment.row).toBeGreaterThan(main.row);
    expect(lanes.get('experiment/deeper')!.forkedFrom).toBe(sample.fork.id);
    const orphan = lanes.get('orphan')!;
    expect(orphan.orphaned).toBe(true);
    expect(orphan.forkedFrom).toBeDefined();
    expect(graph.groups.map((group) => group.name)).toContain('Writing');
    expect(graph.count).toBe(sample.all.length);
  });

  it('collapses consecutive checkpoints of one task into a node with a count, never the head or a fork point', () => {
    const main = [
      checkpoint('1', null, 0),
      checkpoint('2', '1', 0),
      checkpoint('3', '2', 0),
      checkpoint('4', '3', 0),
      checkpoint('5', '4', 1),
      checkpoint('6', '5', 1),
      checkpoint('7', '6', 1),
      checkpoint('8', '7', 1),
    ];
    const fork = checkpoint('9', '6', 2, { branch: 'what-if', lineageId: 'run-fork' });
    const graph = layoutLineage([...main, fork]);
    const [mainLane, forkLane] = graph.groups[0]!.lanes;
    expect(mainLane!.nodes.map((node) => node.ids)).toEqual([
      ['1', '2', '3', '4'],
      ['5'],
      ['6'],
      ['7'],
      ['8'],
    ]);
    expect(mainLane!.nodes[0]!.id).toBe('4');
    expect(mainLane!.nodes[2]!.forkPoint).toBe(true);
    expect(forkLane!.nodes[0]!.column).toBe(3);
    expect(graph.nodeCount).toBe(6);
    const expanded = layoutLineage([...main, fork], { expand: new Set(['1']) });
    expect(expanded.groups[0]!.lanes[0]!.nodes[0]!.ids).toEqual(['1']);
    expect(expanded.nodeCount).toBe(9);
  });

  it('marks a checkpoint whose parent was pruned from the middle of its run', () => {
    const graph = layoutLineage([checkpoint('1', null, 0), checkpoint('4', '3', 1), checkpoint('5', '4', 2)]);
    const nodes = graph.groups[0]!.lanes[0]!.nodes;
    expect(nodes.map((node) => node.parentMissing)).toEqual([false, true, false]);
  });

  // Explorer trial: a run trimmed by maxCheckpoints was drawn as an orphaned fork (red `main`, "the
  // checkpoint this branch came from is not in storage any more"); the README marks it `pruned`.
  it('draws a run trimmed from its start as a gap of its own run, a fork whose fork point is gone as an orphan', () => {
    const trimmed = layoutLineage([checkpoint('4', '3', 1), checkpoint('5', '4', 2)]).groups[0]!.lanes[0]!;
    expect(trimmed).toMatchObject({ branch: 'main', orphaned: false, prunedBefore: '3' });
    expect(trimmed.forkedFrom).toBeUndefined();
    const fork = layoutLineage([checkpoint('6', '2', 1, { branch: 'what-if', lineageId: 'run-fork' })])
      .groups[0]!.lanes[0]!;
    expect(fork).toMatchObject({ branch: 'what-if', orphaned: true, forkedFrom: '2' });
    expect(fork.prunedBefore).toBeUndefined();
  });

  // Left open by a review: a persisted flow state trimmed by retention was drawn as an orphaned fork
  // (only `main` was taken for a branch runs start on); the TUI marked every trimmed run orphaned.
  it('draws a persisted flow state trimmed from its start as a gap of its own run, in the TUI too', () => {
    const branch = 'flow-states/acct-1';
    const saves = [
      checkpoint('7', '6', 1, { branch, lineageId: 'run-state' }),
      checkpoint('8', '7', 2, { branch, lineageId: 'run-state' }),
    ];
    const lane = layoutLineage(saves).groups[0]!.lanes[0]!;
    expect(lane).toMatchObject({ branch, orphaned: false, prunedBefore: '6' });
    expect(lane.forkedFrom).toBeUndefined();
    expect(lane.nodes[0]!.column).toBe(1);
    const tree = buildTree(saves)[0]!.branches[0]!;
    expect(tree).toMatchObject({ orphaned: false, prunedBefore: '6' });
    const mainTree = buildTree([checkpoint('4', '3', 1), checkpoint('5', '4', 2)])[0]!.branches[0]!;
    expect(mainTree).toMatchObject({ orphaned: false, prunedBefore: '3' });
  });

  // Explorer trial: a flow's nodes read "0/3 tasks" where the counts are its methods.
  it("says what a node's progress counts: a crew's tasks, a flow's methods", () => {
    const flowCheckpoint: StoredCheckpoint = {
      ...checkpoint('9', null, 0),
      entities: [
        { kind: 'flow', id: 'flow-1', name: 'ReportFlow', status: 'running', completed: 0, total: 3 },
      ],
    };
    const [flow] = layoutLineage([flowCheckpoint]).groups[0]!.lanes[0]!.nodes;
    expect(flow).toMatchObject({ progress: '0/3', progressUnit: 'methods' });
    const [crew] = layoutLineage([checkpoint('1', null, 2)]).groups[0]!.lanes[0]!.nodes;
    expect(crew).toMatchObject({ progress: '2/3', progressUnit: 'tasks' });
  });

  it('keeps 10,000 checkpoints of a long run to a few nodes', () => {
    const many: StoredCheckpoint[] = [];
    for (let index = 0; index < 10_000; index += 1)
      many.push({
        ...checkpoint(String(index + 1), index === 0 ? null : String(index), Math.floor(index / 200)),
        createdAt: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
        id: `c${String(index + 1).padStart(6, '0')}`,
        parentId: index === 0 ? null : `c${String(index).padStart(6, '0')}`,
      });
    const started = performance.now();
    const graph = layoutLineage(many);
    const took = performance.now() - started;
    expect(graph.count).toBe(10_000);
    expect(graph.nodeCount).toBeLessThanOrEqual(52);
    expect(took).toBeLessThan(2000);
  });
});
