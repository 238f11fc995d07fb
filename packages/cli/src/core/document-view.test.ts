import { type CheckpointableEntity, RuntimeState, readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { writeFakeRun } from '../test-support/fake-crew.js';
import { outputText, primaryEntity, viewDocument } from './document-view.js';

describe('viewDocument', () => {
  it('turns a crew checkpoint into inputs, flat tasks with status and outputs, and placeholders', async () => {
    const provider = new InMemoryProvider();
    const stored = await writeFakeRun({
      provider,
      location: 'x',
      taskCount: 3,
      complete: 2,
      inputs: { topic: 'AI', when: new Date(0) },
    });
    const view = viewDocument(await readDocument(provider, 'x', stored.at(-1)!.id));
    expect(view.inputs).toEqual({ topic: 'AI', when: new Date(0) });
    expect(view.tasks.map((task) => [task.index, task.status, task.agentRole])).toEqual([
      [0, 'completed', 'Researcher'],
      [1, 'completed', 'Writer'],
      [2, 'pending', 'Researcher'],
    ]);
    expect(view.tasks[1]!.output).toContain('Output 2');
    expect(view.placeholders).toEqual(['audience', 'topic']);
    expect(view.entities[0]!.agents.map((agent) => agent.model)).toEqual(['offline:test', 'offline:test']);
  });

  it('shows a crew saved as running with every task completed as completed', async () => {
    const provider = new InMemoryProvider();
    type Status = 'running' | 'completed' | 'failed';
    const crewWith = (status: Status, taskStatuses: Status[]): CheckpointableEntity => ({
      entityKind: 'crew',
      entityId: `crew-${taskStatuses.join('-')}`,
      entityName: 'Research',
      snapshotEntity: () => ({
        kind: 'crew',
        id: `crew-${taskStatuses.join('-')}`,
        name: 'Research',
        data: {
          status,
          tasks: taskStatuses.map((taskStatus) => ({
            description: 'Research {topic}',
            status: taskStatus,
            output: taskStatus === 'completed' ? { raw: 'done' } : null,
          })),
        },
      }),
      summarizeEntity: () => ({ kind: 'crew', id: 'crew', name: 'Research', status }),
    });
    const statusOf = async (entity: CheckpointableEntity) => {
      const state = new RuntimeState({ entities: [entity], inputs: {}, provider, location: 'x' });
      const stored = await state.writeCheckpoint();
      return viewDocument(await readDocument(provider, 'x', stored.id)).entities[0]!.status;
    };
    expect(await statusOf(crewWith('running', ['completed', 'completed']))).toBe('completed');
    expect(await statusOf(crewWith('running', ['completed', 'running']))).toBe('running');
    expect(await statusOf(crewWith('failed', ['completed', 'failed']))).toBe('failed');
  });

  it('reads outputs stored as text, { raw } or encoded values', () => {
    expect(outputText('plain')).toBe('plain');
    expect(outputText({ raw: 'raw text', agentRole: 'x' })).toBe('raw text');
    expect(outputText({ json: { raw: 'encoded' } })).toBe('encoded');
    expect(outputText(null)).toBeUndefined();
    expect(outputText({ other: 1 })).toBe('{"other":1}');
  });

  it('picks the flow of a checkpoint as its primary entity, else the first crew', () => {
    expect(primaryEntity([{ kind: 'agent' }, { kind: 'crew' }, { kind: 'flow' }] as const)?.kind).toBe(
      'flow',
    );
    expect(primaryEntity([{ kind: 'agent' }, { kind: 'crew' }] as const)?.kind).toBe('crew');
    expect(primaryEntity([])).toBeUndefined();
  });
});
