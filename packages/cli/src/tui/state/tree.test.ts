import type { StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { writeFakeRun } from '../../test-support/fake-crew.js';
import { sampleCheckpoints } from '../../test-support/sample-tree.js';
import { clipLine } from './line-fitting.js';
import { type Line, treeRowLine, triggerLabel } from './panels.js';
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

  it('nests a second continuation of one checkpoint under it: two children are not drawn as a line', async () => {
    const provider = new InMemoryProvider();
    const [first, second] = await writeFakeRun({ provider, location: 'here', taskCount: 2, onStart: false });
    // Resuming `first` again on its own run (JSON without leases allows it) writes a sibling of `second`.
    const sibling: StoredCheckpoint = {
      ...second!,
      id: second!.id.replace(/^(\d{8}T)\d{9}/, '$1235959999'),
      createdAt: new Date(Date.parse(second!.createdAt) + 60_000).toISOString(),
      parentId: first!.id,
    };
    const research = buildTree([first!, second!, sibling])[0]!;
    const main = research.branches[0]!;
    expect(main.checkpoints.map((node) => node.key)).toEqual([first!.id, second!.id]);
    const again = main.checkpoints[0]!.forks[0]!;
    expect(again.resumedFrom).toBe(first!.id);
    expect(again.checkpoints.map((node) => node.key)).toEqual([sibling.id]);
    expect(again.checkpoints[0]!.sequence).toBe(3);
    const text = visibleRows([research], new Set()).map((row) => textOf(treeRowLine(row, new Set(), 0)));
    expect(text[3]).toBe('      - main (1) resumed again');
    // The trial read "2/2 task done" as a sentence: the progress and the trigger are set apart.
    expect(text[4]).toMatch(/^ {10}#3 \d\d:\d\d:\d\d 2\/2 · task done$/);
  });
});

function textOf(line: Line): string {
  return line.map((segment) => segment.text).join('');
}

describe('treeRowLine for a checkpoint', () => {
  it('tells the triggers of a `*` run apart in a 33-column panel, rows by number, the edit mark kept', async () => {
    const provider = new InMemoryProvider();
    const [checkpoint] = await writeFakeRun({ provider, location: 'here', taskCount: 2, onStart: false });
    const rowOf = (trigger: string, sequence: number) => {
      const node = {
        type: 'checkpoint' as const,
        key: checkpoint!.id,
        checkpoint: { ...checkpoint!, trigger },
        forks: [],
        sequence,
      };
      return textOf(
        clipLine(
          treeRowLine({ node, depth: 2, expandable: false, expanded: false }, new Set([checkpoint!.id]), 0),
          33,
        ),
      );
    };
    const started = rowOf('llm_call_started', 2);
    const completed = rowOf('llm_call_completed', 3);
    // The edit mark goes with the row's number, not between progress and trigger ("1/2 * task done"
    // read as a product); a narrow panel cuts the trigger's end, still telling the two apart.
    expect(started).toMatch(/^ {6}#2\* \d\d:\d\d:\d\d 1\/2 · llm sta~$/);
    expect(completed).toMatch(/^ {6}#3\* \d\d:\d\d:\d\d 1\/2 · llm done$/);
    expect(rowOf('task_completed', 1)).toMatch(/#1\* \d\d:\d\d:\d\d 1\/2 · task do/);
    expect(triggerLabel('method_execution_finished')).toBe('method done');
    expect(triggerLabel('tool_usage_failed')).toBe('tool failed');
    expect(triggerLabel('memory_save_started')).toBe('memory save start');
    expect(rowOf('SIGINT', 12)).toContain('#12* ');
  });
});

// The trial: a crew without a name (the runtime calls it "crew") was listed as "crew crew".
describe('treeRowLine for a group', () => {
  it('names an unnamed crew once, and a named one with its name', () => {
    const group = (name: string) =>
      textOf(
        treeRowLine(
          {
            node: {
              type: 'group',
              key: name,
              kind: 'crew',
              name,
              count: 2,
              latestAt: new Date(0).toISOString(),
              latestId: 'x',
              branches: [],
            },
            depth: 0,
            expandable: true,
            expanded: true,
          },
          new Set(),
          0,
        ),
      );
    expect(group('crew')).toMatch(/^- crew \(2\)/);
    expect(group('Research')).toMatch(/^- crew Research \(2\)/);
  });
});
