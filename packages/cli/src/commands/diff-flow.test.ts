import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

/** Two methods that fill the state: no crew, so no task differs between its checkpoints. */
class ReportFlow extends Flow<{ topic: string; research: string; review?: string }> {
  initialState = { topic: 'tides', research: '' };

  @start() research() {
    this.state.research = `facts about ${this.state.topic}`;
    return this.state.research;
  }

  @listen('research') review(research: string) {
    this.state.review = `reviewed: ${research}`;
    return this.state.review;
  }
}

describe('checkpoint diff of two checkpoints of a flow', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let first: StoredCheckpoint;
  let last: StoredCheckpoint;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-diff-flow-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    await new ReportFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['flow_started', 'method_execution_finished'] },
    }).kickoff();
    const written = [...(await provider.list(provider.resolveLocation(location)))].sort(
      (a, b) => a.eventCount - b.eventCount,
    );
    await provider.close?.();
    first = written[0]!;
    last = written.at(-1)!;
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('shows the completed methods and the state that changed, as text and --json', async () => {
    const text = await crewline('checkpoint', 'diff', first.id, last.id);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Completed methods: (none) -> research, review');
    expect(text.stdout).toContain('State:');
    expect(text.stdout).toContain('  ~ research: "" -> "facts about tides"');
    expect(text.stdout).toContain('  + review = "reviewed: facts about tides"');
    expect(text.stdout).not.toContain('are the same');

    const json = JSON.parse((await crewline('checkpoint', 'diff', first.id, last.id, '--json')).stdout);
    expect(json.completedMethods).toEqual({ from: [], to: ['research', 'review'] });
    expect(json.state).toEqual([
      { path: 'research', change: 'changed', from: '', to: 'facts about tides' },
      { path: 'review', change: 'added', to: 'reviewed: facts about tides' },
    ]);

    const same = await crewline('checkpoint', 'diff', last.id, last.id, '--json');
    expect(JSON.parse(same.stdout)).toMatchObject({
      completedMethods: { from: ['research', 'review'], to: ['research', 'review'] },
      state: [],
    });
    expect((await crewline('checkpoint', 'diff', last.id, last.id)).stdout).toContain(
      'Inputs, tasks, completed methods and state are the same.',
    );
  });
});
