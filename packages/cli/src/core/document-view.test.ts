import { type CheckpointableEntity, RuntimeState, readDocument } from '@crewline/runtime-state';
import { toAgentData } from '@crewline/runtime-state/internal';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { fakeCrewData, writeFakeRun } from '../test-support/fake-crew.js';
import { primaryEntity, viewDocument } from './document-view.js';

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
    const crewWith = (status: Status, taskStatuses: Status[]): CheckpointableEntity => {
      const id = `crew-${taskStatuses.join('-')}`;
      const tasks = taskStatuses.map((taskStatus) => ({
        description: 'Research {topic}',
        expectedOutput: 'notes',
        agentRole: 'Researcher' as const,
        status: taskStatus,
        ...(taskStatus === 'completed' ? { output: 'done' } : {}),
      }));
      return {
        entityKind: 'crew',
        entityId: id,
        entityName: 'Research',
        snapshotEntity: () => ({
          kind: 'crew',
          id,
          name: 'Research',
          data: fakeCrewData('Research', tasks, status),
        }),
        summarizeEntity: () => ({ kind: 'crew', id, name: 'Research', status }),
      };
    };
    const statusOf = async (entity: CheckpointableEntity) => {
      const state = new RuntimeState({ entities: [entity], inputs: {}, provider, location: 'x' });
      const stored = await state.writeCheckpoint();
      return viewDocument(await readDocument(provider, 'x', stored.id)).entities[0]!.status;
    };
    expect(await statusOf(crewWith('running', ['completed', 'completed']))).toBe('completed');
    expect(await statusOf(crewWith('running', ['completed', 'running']))).toBe('running');
    expect(await statusOf(crewWith('failed', ['completed', 'failed']))).toBe('failed');
  });

  it('refuses a crew whose data is damaged with corrupt_checkpoint naming the field, not a guess', async () => {
    const provider = new InMemoryProvider();
    const stored = await writeFakeRun({ provider, location: 'x', taskCount: 2, complete: 1 });
    const document = await readDocument(provider, 'x', stored.at(-1)!.id);
    (document.entities[0]!.data.tasks as { status: unknown }[])[0]!.status = 'done';
    expect(() => viewDocument(document)).toThrow(
      expect.objectContaining({
        code: 'corrupt_checkpoint',
        message: expect.stringMatching(/tasks\.0\.status/),
      }),
    );
  });

  it('picks the flow of a checkpoint as its primary entity, else the first crew', () => {
    expect(primaryEntity([{ kind: 'agent' }, { kind: 'crew' }, { kind: 'flow' }] as const)?.kind).toBe(
      'flow',
    );
    expect(primaryEntity([{ kind: 'agent' }, { kind: 'crew' }] as const)?.kind).toBe('crew');
    expect(primaryEntity([])).toBeUndefined();
  });
});

describe('viewDocument of a standalone agent', () => {
  // Trial 3: `info` showed "Conversation: 2 messages saved" and never the agent's answer.
  it('reads the answer of its finished conversation', async () => {
    const provider = new InMemoryProvider();
    const data = toAgentData({
      id: 'a1',
      role: 'Writer',
      goal: 'Write',
      backstory: 'A writer',
      llm: 'offline:test',
      tools: [],
      maxIterations: 5,
      checkpoint: null,
      knowledge: null,
      memory: null,
      status: 'completed',
      kickoffStarted: true,
      kickoffMessages: null,
      conversation: {
        messages: [
          { role: 'user', content: 'Write' },
          { role: 'assistant', content: 'The answer' },
        ],
        llmCalls: 1,
        finished: true,
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, cachedInputTokens: 0 },
        output: 'The answer',
      },
      recallAdded: false,
    });
    const agent: CheckpointableEntity = {
      entityKind: 'agent',
      entityId: 'a1',
      entityName: 'Writer',
      snapshotEntity: () => ({ kind: 'agent', id: 'a1', name: 'Writer', data }),
      summarizeEntity: () => ({ kind: 'agent', id: 'a1', name: 'Writer', status: 'completed' }),
    };
    const state = new RuntimeState({ entities: [agent], inputs: {}, provider, location: 'x' });
    const stored = await state.writeCheckpoint();
    const [view] = viewDocument(await readDocument(provider, 'x', stored.id)).entities;
    expect(view).toMatchObject({ kind: 'agent', messageCount: 2, answer: 'The answer' });
  });
});
