import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BaseEvent, CrewlineError, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, listen, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-ask-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function recordEvents(bus: EventBus): string[] {
  const seen: string[] = [];
  bus.onAny((_source: unknown, event: BaseEvent) => {
    seen.push(event.type);
  });
  return seen;
}

const calls: string[] = [];

class Approval extends Flow<{ draft: string; verdict: string }> {
  initialState = { draft: '', verdict: '' };

  @start() write() {
    calls.push('write');
    this.state.draft = 'a short essay';
    return this.state.draft;
  }

  @listen('write') async approve(draft: string) {
    calls.push('approve');
    const answer = await this.ask(`Publish "${draft}"?`);
    this.state.verdict = answer;
    return answer;
  }

  @listen('approve') publish(answer: string) {
    calls.push('publish');
    return answer === 'yes' ? `published ${this.state.draft}` : 'discarded';
  }
}

describe('asking a person', () => {
  it('pauses, checkpoints, and resumes from the checkpoint with the answer', async () => {
    calls.length = 0;
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const flow = new Approval({ bus, checkpoint: { location: 'mem', provider } });
    const paused = await flow.kickoff();
    expect(paused.status).toBe('paused');
    expect(paused.pause).toMatchObject({
      methodName: 'approve',
      message: 'Publish "a short essay"?',
      kind: 'feedback',
    });
    expect(paused.pause?.resumeFrom).toMatch(/^mem#/);
    expect(paused.pause?.hint).toContain(`Approval.resume('${paused.pause?.resumeFrom}', answer)`);
    expect(events).toEqual(
      expect.arrayContaining(['method_execution_paused', 'human_feedback_requested', 'flow_paused']),
    );
    expect(events).not.toContain('flow_finished');
    const [stored] = await provider.list('mem');
    expect(stored?.trigger).toBe('flow_paused');
    expect(stored?.entities[0]?.status).toBe('paused');

    calls.length = 0;
    const resumeBus = new EventBus();
    const resumeEvents = recordEvents(resumeBus);
    const done = await Approval.resume({ restoreFrom: paused.pause?.resumeFrom as string, provider }, 'yes', {
      bus: resumeBus,
    });
    expect(done.status).toBe('completed');
    expect(done.output).toBe('published a short essay');
    expect(done.state.verdict).toBe('yes');
    expect(done.stateId).toBe(paused.stateId);
    expect(calls).toEqual(['approve', 'publish']);
    expect(resumeEvents).toContain('human_feedback_received');
    expect(resumeEvents).not.toContain('flow_started');
  });

  it('resumes the same instance in memory when nothing is stored', async () => {
    calls.length = 0;
    const flow = new Approval({ bus: new EventBus() });
    const paused = await flow.kickoff();
    expect(paused.pause?.resumeFrom).toBeUndefined();
    expect(paused.pause?.hint).toContain('flow.resume(answer)');
    const done = await flow.resume('no');
    expect(done.output).toBe('discarded');
    expect(calls).toEqual(['write', 'approve', 'approve', 'publish']);
    await expect(flow.resume('again')).rejects.toThrow(/is not paused/);
  });

  it('resumes the same instance from the pause checkpoint in the provider object it writes to', async () => {
    calls.length = 0;
    // A provider object the built-in registry knows nothing of: the pause checkpoint is only there.
    const provider = new InMemoryProvider();
    const flow = new Approval({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    });
    const paused = await flow.kickoff();
    expect(paused.pause?.resumeFrom).toMatch(/^mem#/);
    const done = await flow.resume('yes');
    expect(done.output).toBe('published a short essay');
    expect(calls).toEqual(['write', 'approve', 'approve', 'publish']);
    // It goes on writing there, after the pause checkpoint it continued from.
    const checkpoints = await provider.list('mem');
    expect(checkpoints.at(-1)?.entities[0]?.status).toBe('completed');
    const pause = checkpoints.findIndex((checkpoint) => checkpoint.reference === paused.pause?.resumeFrom);
    expect(checkpoints[pause + 1]?.parentId).toBe(checkpoints[pause]?.id);
  });

  it('resumes a persisted flow by state id in a new instance', async () => {
    calls.length = 0;
    const location = join(root, 'persisted');
    @persist({ location })
    class PersistedApproval extends Approval {}
    const paused = await new PersistedApproval({ bus: new EventBus() }).kickoff({
      inputs: { id: 'essay-1' },
    });
    expect(paused.pause?.hint).toBe(`continue with PersistedApproval.resume({ id: 'essay-1' }, answer)`);
    const [state] = await PersistedApproval.listStates();
    expect(state).toMatchObject({ id: 'essay-1', status: 'paused', lastMethod: 'write' });
    calls.length = 0;
    const done = await PersistedApproval.resume({ id: 'essay-1' }, 'yes', { bus: new EventBus() });
    expect(done.output).toBe('published a short essay');
    expect(calls).toEqual(['approve', 'publish']);
    await expect(PersistedApproval.resume({ id: 'essay-1' }, 'yes')).rejects.toThrow(
      /is not waiting for input/,
    );
    await expect(PersistedApproval.resume({ id: 'missing' }, 'yes')).rejects.toThrow(
      /no saved state "missing"/,
    );
  });

  it('asks several questions in one method, one pause each, and emits input events for kind "input"', async () => {
    class Interview extends Flow<{ answers: string[] }> {
      initialState = { answers: [] as string[] };
      @start() async interview() {
        const name = await this.ask('Name?', { kind: 'input' });
        const city = await this.ask('City?', { kind: 'input' });
        this.state.answers.push(name, city);
        return `${name} from ${city}`;
      }
    }
    const bus = new EventBus();
    const events = recordEvents(bus);
    const flow = new Interview({ bus });
    expect((await flow.kickoff()).pause?.message).toBe('Name?');
    expect((await flow.resume('Ada')).pause?.message).toBe('City?');
    const done = await flow.resume('London');
    expect(done.output).toBe('Ada from London');
    expect(done.state.answers).toEqual(['Ada', 'London']);
    expect(events.filter((type) => type === 'flow_input_requested')).toHaveLength(2);
    expect(events.filter((type) => type === 'flow_input_received')).toHaveLength(2);
    expect(events).not.toContain('human_feedback_requested');
  });

  it('pauses even when the method catches the pause, and refuses ask() outside a method', async () => {
    class Swallow extends Flow {
      @start() async careless() {
        try {
          await this.ask('Really?');
        } catch {
          return 'carried on';
        }
        return 'answered';
      }
    }
    const flow = new Swallow({ bus: new EventBus() });
    expect((await flow.kickoff()).status).toBe('paused');
    expect((await flow.resume('ok')).output).toBe('answered');
    const failure = await flow.ask('outside').catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'invalid_state')).toBe(true);
  });
});
