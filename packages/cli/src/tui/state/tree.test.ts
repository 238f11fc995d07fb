import { describe, expect, it } from 'vitest';
import { sampleCheckpoints } from '../../test-support/sample-tree.js';
import { ancestorKeys, type BranchNode, buildTree, findCheckpointNode, visibleRows } from './tree.js';

describe('buildTree', () => {
  it('groups by entity, then branch, with forks nested under the checkpoint they came from', async () => {
    const sample = await sampleCheckpoints();
    const tree = buildTree(sample.all);
    expect(tree.map((group) => `${group.kind} ${group.name} ${group.count}`)).toEqual([
      'crew Writing 2',
      'crew Research 9',
    ]);
    const research = tree[1]!;
    expect(research.branches.map((branch) => branch.branch)).toEqual(['main', 'orphan']);
    const main = research.branches[0]!;
    expect(main.checkpoints.map((node) => node.key)).toEqual(sample.main.map((checkpoint) => checkpoint.id));
    const forkPoint = main.checkpoints[2]!;
    expect(forkPoint.forks.map((branch) => branch.branch)).toEqual(['experiment']);
    const experiment = forkPoint.forks[0]!;
    expect(experiment.forkedFrom).toBe(sample.main[2]!.id);
    expect(experiment.checkpoints[0]!.forks.map((branch) => branch.branch)).toEqual(['experiment/deeper']);
  });

  it('marks a branch whose fork point is gone as orphaned and keeps it at the top of its group', async () => {
    const sample = await sampleCheckpoints();
    const research = buildTree(sample.all)[1]!;
    const orphan = research.branches.find((branch) => branch.branch === 'orphan') as BranchNode;
    expect(orphan.orphaned).toBe(true);
    expect(orphan.checkpoints[0]!.key).toBe(sample.orphan.id);
    expect(research.branches.find((branch) => branch.branch === 'main')!.orphaned).toBe(false);
  });

  it('lists rows depth-first and hides the children of collapsed nodes', async () => {
    const sample = await sampleCheckpoints();
    const tree = buildTree(sample.all);
    const all = visibleRows(tree, new Set());
    expect(all).toHaveLength(2 + 4 + sample.all.length + 1);
    const deeper = all.find((row) => row.node.type === 'branch' && row.node.branch === 'experiment/deeper')!;
    expect(deeper.depth).toBe(5);
    const collapsed = visibleRows(tree, new Set([tree[1]!.key]));
    expect(
      collapsed.filter((row) => row.depth > 0 && ancestorKeys(tree, row.node.key)[0] === tree[1]!.key),
    ).toHaveLength(0);
  });

  it('finds nodes and their ancestors', async () => {
    const sample = await sampleCheckpoints();
    const tree = buildTree(sample.all);
    expect(findCheckpointNode(tree, sample.forkOfFork.id)?.checkpoint.branch).toBe('experiment/deeper');
    const path = ancestorKeys(tree, sample.forkOfFork.id);
    expect(path[0]).toBe('crew:Research');
    expect(path).toContain(sample.main[2]!.id);
    expect(path).toContain(sample.fork.id);
    expect(ancestorKeys(tree, 'missing')).toEqual([]);
  });
});
