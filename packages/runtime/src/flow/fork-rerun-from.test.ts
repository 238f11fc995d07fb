// New-user trial (h5 D2): `Flow.fork(ref, { rerunFrom })` took any method name and any checkpoint. A
// typo, or a checkpoint saved after that method completed, continued from there without running the
// method again: the fork paid for what followed on the old route, silently.
import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, listen, router, start } from './index.js';

const ran: string[] = [];

class Routed extends Flow<{ topic: string }> {
  initialState = { topic: 'a long topic' };
  @start() begin() {
    ran.push('begin');
  }
  @router('begin') choose() {
    ran.push('choose');
    return this.state.topic.length > 5 ? 'long' : 'short';
  }
  @listen('long') longPath() {
    ran.push('long');
  }
  @listen('short') shortPath() {
    ran.push('short');
  }
}

/** A finished run's checkpoints, one per completed method, oldest first. */
async function finishedRun() {
  const provider = new InMemoryProvider();
  await new Routed({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
  }).kickoff();
  ran.length = 0;
  return { provider, saved: await provider.list('mem') };
}

describe('Flow.fork with rerunFrom', () => {
  it('refuses a method the flow does not have, naming its methods', async () => {
    const { provider, saved } = await finishedRun();
    const refused = await Routed.fork(
      { restoreFrom: `mem#${saved[0]!.id}`, provider },
      { bus: new EventBus(), rerunFrom: 'chooze' },
    ).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_argument' });
    expect(String(refused)).toContain(
      'rerunFrom "chooze" is not a method of flow "Routed"; its methods are begin, choose',
    );
  });

  it('refuses a checkpoint saved after the method completed, before anything runs', async () => {
    const { provider, saved } = await finishedRun();
    // Saved as `choose` completed: a fork of it went on down the old route.
    const afterChoose = saved[1]!;
    const refused = await Routed.fork(
      { restoreFrom: `mem#${afterChoose.id}`, provider },
      { bus: new EventBus(), rerunFrom: 'choose' },
    ).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'invalid_argument',
      details: { rerunFrom: 'choose', checkpointId: afterChoose.id },
    });
    expect(String(refused)).toContain(`checkpoint ${afterChoose.id} was saved after "choose" completed`);
    expect(ran).toEqual([]);
  });

  it('re-runs the method from a checkpoint saved before it completed', async () => {
    const { provider, saved } = await finishedRun();
    const fork = await Routed.fork(
      { restoreFrom: `mem#${saved[0]!.id}`, provider },
      { bus: new EventBus(), rerunFrom: 'choose' },
    );
    fork.state.topic = 'ab';
    await fork.kickoff();
    expect(ran).toEqual(['choose', 'short']);
  });
});
