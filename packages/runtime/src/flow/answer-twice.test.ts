import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

const published: string[] = [];
let publishFails = false;
const root = mkdtempSync(join(tmpdir(), 'crewline-answer-twice-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

class Approval extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };
  @start() async approve() {
    this.state.verdict = await this.ask('Publish?');
    return this.state.verdict;
  }
  @listen('approve') publish(answer: string) {
    if (publishFails) throw new Error('publisher down');
    published.push(answer);
    return `published: ${answer}`;
  }
}

describe('a question answered twice from its checkpoint', () => {
  // Trial (flows, second) 5: the second answer moved to a new branch with a warning, and publish
  // ran twice ("yes", then "no").
  it('is refused the second time (conflict), unless asked to fork', async () => {
    published.length = 0;
    // Files: the continued runs keep checkpointing where they were read from, and write their saves.
    const paused = await new Approval({
      bus: new EventBus(),
      checkpoint: { location: join(root, 'answers'), onEvents: ['method_execution_finished'] },
    }).kickoff();
    const reference = { restoreFrom: paused.pause!.resumeFrom! };
    expect((await Approval.resume(reference, 'yes', { bus: new EventBus() })).output).toBe('published: yes');

    const again = await Approval.resume(reference, 'no', { bus: new EventBus() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(again, 'conflict')).toBe(true);
    expect((again as Error).message).toContain('was answered already');
    expect((again as Error).message).toContain('fork it');
    expect(published).toEqual(['yes']);

    const forked = await Approval.fork(reference, { bus: new EventBus() });
    expect((await forked.resume('no')).output).toBe('published: no');
    expect(published).toEqual(['yes', 'no']);
  });
});

describe('an answer to a flow whose checkpoints come only from its pause', () => {
  // Leftover of trial (flows) 5 and the explorer trial 7: with the default triggers (task_completed)
  // and no task after the question, the answered run wrote nothing, so the same pause could be
  // answered again (publish ran twice) and a fork with an answer left no branch behind.
  it('is recorded as soon as it is given: a second answer is refused, a fork leaves its branch', async () => {
    published.length = 0;
    const location = join(root, 'answer-recorded');
    const paused = await new Approval({ bus: new EventBus(), checkpoint: { location } }).kickoff();
    const reference = { restoreFrom: paused.pause!.resumeFrom! };
    expect((await Approval.resume(reference, 'yes', { bus: new EventBus() })).output).toBe('published: yes');

    const again = await Approval.resume(reference, 'no', { bus: new EventBus() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(again, 'conflict')).toBe(true);
    expect((again as Error).message).toContain('was answered already');
    expect(published).toEqual(['yes']);

    const forked = await Approval.fork(reference, { bus: new EventBus(), branch: 'answered-no' });
    expect((await forked.resume('no')).output).toBe('published: no');
    const provider = new JsonProvider();
    const written = await provider.list(provider.resolveLocation(location));
    const onFork = written.filter((checkpoint) => checkpoint.branch === 'answered-no');
    expect(onFork.map((checkpoint) => checkpoint.trigger)).toEqual(['human_feedback_received']);
    const pausedAt = written.find((checkpoint) => checkpoint.trigger === 'flow_paused');
    expect(onFork[0]?.parentId).toBe(pausedAt?.id);
  });

  it('resumes from the recorded answer without asking again', async () => {
    published.length = 0;
    const location = join(root, 'answer-then-crash');
    const paused = await new Approval({ bus: new EventBus(), checkpoint: { location } }).kickoff();
    // The answered run stops (a crash) while publish runs: its answer is in the checkpoint before it.
    const crashing = await Approval.fromCheckpoint(
      { restoreFrom: paused.pause!.resumeFrom! },
      { bus: new EventBus() },
    );
    publishFails = true;
    await expect(crashing.resume('yes')).rejects.toThrow('publisher down');
    publishFails = false;
    const provider = new JsonProvider();
    const latest = (await provider.latest(provider.resolveLocation(location)))!;
    expect(latest.trigger).toBe('human_feedback_received');
    const resumed = await Approval.fromCheckpoint({ restoreFrom: latest.reference }, { bus: new EventBus() });
    expect((await resumed.kickoff()).output).toBe('published: yes');
  });
});

describe('a flow object whose answer was refused', () => {
  // Review of 06cbd33: the refused answer stayed on the object (the pause cleared, the answer added),
  // so a second try said "not waiting for input" — and before that commit it ran with both answers.
  it('is refused the same way again, and still paused', async () => {
    published.length = 0;
    const location = join(root, 'refused-twice');
    const paused = await new Approval({ bus: new EventBus(), checkpoint: { location } }).kickoff();
    const reference = { restoreFrom: paused.pause!.resumeFrom! };
    const first = await Approval.fromCheckpoint(reference, { bus: new EventBus() });
    const second = await Approval.fromCheckpoint(reference, { bus: new EventBus() });
    expect((await second.resume('B')).output).toBe('published: B');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refusal = await first.resume('A').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(String(refusal), `attempt ${attempt}`).toContain('was answered already');
      expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
      expect((refusal as Error).message).toContain('was answered already');
    }
    expect(published).toEqual(['B']);
  });
});
