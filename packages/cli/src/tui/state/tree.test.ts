import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { writeFakeRun } from '../../test-support/fake-crew.js';
import { sampleCheckpoints } from '../../test-support/sample-tree.js';
import { treeRowLine } from './panels.js';
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

  it('shows two runs of one crew on main as two runs, each named, never interleaved', async () => {
    const provider = new InMemoryProvider();
    const first = await writeFakeRun({ provider, location: 'here', taskCount: 2, onStart: false });
    const second = await writeFakeRun({ provider, location: 'here', taskCount: 3, onStart: false });
    const research = buildTree(await provider.list('here'))[0]!;
    expect(research.branches.map((branch) => branch.checkpoints.map((node) => node.key))).toEqual([
      first.map((checkpoint) => checkpoint.id),
      second.map((checkpoint) => checkpoint.id),
    ]);
    const labels = visibleRows([research], new Set())
      .filter((row) => row.node.type === 'branch')
      .map((row) =>
        treeRowLine(row, new Set(), Date.now())
          .map((segment) => segment.text)
          .join(''),
      );
    expect(labels).toEqual([
      `  - main run ${first[0]!.lineageId.slice(0, 8)} (2)`,
      `  - main run ${second[0]!.lineageId.slice(0, 8)} (3)`,
    ]);
    // A branch name that only one run uses needs no run id.
    const single = buildTree(first)[0]!;
    expect(single.branches[0]!.sharesBranchName).toBe(false);
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
