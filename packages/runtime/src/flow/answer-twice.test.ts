import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

const published: string[] = [];
const root = mkdtempSync(join(tmpdir(), 'crewline-answer-twice-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

class Approval extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };
  @start() async approve() {
    this.state.verdict = await this.ask('Publish?');
    return this.state.verdict;
  }
  @listen('approve') publish(answer: string) {
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
