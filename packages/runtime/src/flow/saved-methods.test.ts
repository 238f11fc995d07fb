import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { and, Flow, listen, persist, start } from './index.js';

const ran: string[] = [];

/** Saved while `draft` is due: `research` completed, `draft` not yet run. */
class Pipeline extends Flow<{ notes: string[] }> {
  initialState = { notes: [] as string[] };

  @start() research() {
    ran.push('research');
    return 'facts';
  }

  @listen('research') draft(facts: string) {
    ran.push('draft');
    return facts.toUpperCase();
  }

  @listen('draft') publish(text: string) {
    ran.push('publish');
    return `published ${text}`;
  }
}

/** The same flow with `draft` renamed `compose` since the checkpoint. */
class RenamedPipeline extends Flow<{ notes: string[] }> {
  static flowName = 'Pipeline';
  initialState = { notes: [] as string[] };

  @start() research() {
    ran.push('research');
    return 'facts';
  }

  @listen('research') compose(facts: string) {
    ran.push('compose');
    return facts.toUpperCase();
  }

  @listen('compose') publish(text: string) {
    ran.push('publish');
    return `published ${text}`;
  }
}

describe('a saved run whose due method was renamed since the checkpoint', () => {
  // Trial (flows) 1: the resume said "Finished", ran nothing and wrote nothing.
  it('is refused before anything runs or is written, naming the method and the fixes', async () => {
    const provider = new InMemoryProvider();
    await new Pipeline({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const afterResearch = (await provider.list('mem'))[0]!;
    const written = (await provider.list('mem')).length;
    ran.length = 0;

    const restored = await RenamedPipeline.fromCheckpoint(
      { restoreFrom: `mem#${afterResearch.id}`, provider },
      { bus: new EventBus() },
    );
    const refusal = await restored.kickoff().then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(CrewlineError.hasCode(refusal, 'invalid_state')).toBe(true);
    const message = (refusal as Error).message;
    expect(message).toContain('the checkpoint has an execution of "draft" to run');
    expect(message).toContain('its methods are research, compose, publish');
    expect(message).toContain('give the method its old name back');
    expect(ran).toEqual([]);
    expect(await provider.list('mem')).toHaveLength(written);
  });
});

const root = mkdtempSync(join(tmpdir(), 'crewline-renamed-persisted-'));
// No retries: a run's end leaves nothing being created in its JSON location (the spare files made
// ahead of its next writes are removed as it releases its lineage; one still being made once failed
// this rmdir with ENOTEMPTY in a CI rehearsal).
afterAll(() => rmSync(root, { recursive: true }));

@persist({ location: join(root, 'states') })
class Account extends Flow<{ visits: number; note: string }> {
  static flowName = 'Account';
  initialState = { visits: 0, note: '' };
  @start() visit() {
    this.state.visits += 1;
    return 'v';
  }
  @listen('visit') summarize(): string {
    throw new Error('summary service down');
  }
}

/** Account a release later: `summarize` renamed `summarise`. */
@persist({ location: join(root, 'states') })
class AccountV2 extends Flow<{ visits: number; note: string }> {
  static flowName = 'Account';
  initialState = { visits: 0, note: '' };
  @start() visit() {
    this.state.visits += 1;
    return 'v';
  }
  @listen('visit') summarise() {
    this.state.note = `visits ${this.state.visits}`;
    return this.state.note;
  }
}

describe('a persisted state whose last run failed in a method renamed since', () => {
  // A review: the advice "kick the flow off anew" loaded the same state by its id again, refused again.
  it('is refused with the ways out a persisted state has (its id loads it again)', async () => {
    await expect(new Account({ bus: new EventBus() }).kickoff({ inputs: { id: 'acct-1' } })).rejects.toThrow(
      'summary service down',
    );
    const refusal = await new AccountV2({ bus: new EventBus() }).kickoff({ inputs: { id: 'acct-1' } }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refusal?.message).toContain("kickoff({ inputs: { id: 'acct-1' }, rerunFrom: '<method>' })");
    expect(refusal?.message).toContain('crewline checkpoint flows rerun acct-1 --from <method>');
    expect(refusal?.message).toContain('start a new state under another id');
    expect(refusal?.message).not.toContain('kick the flow off anew');
    const fresh = await new AccountV2({ bus: new EventBus() }).kickoff({ inputs: { id: 'acct-2' } });
    expect(fresh.state.note).toBe('visits 1');
    const spares = (readdirSync(root, { recursive: true }) as string[]).filter((entry) =>
      entry.includes('.spare.'),
    );
    expect(spares).toEqual([]);
  });
});

let release: () => void = () => undefined;

/** Two branches joined: saved once `left` completed while `right` still waits. */
class Joined extends Flow<{ done: string[] }> {
  static flowName = 'Joined';
  initialState = { done: [] as string[] };
  @start() begin() {
    return 'go';
  }
  @listen('begin') left() {
    this.state.done.push('left');
    return 'l';
  }
  @listen('begin') async right() {
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    this.state.done.push('right');
    return 'r';
  }
  @listen(and('left', 'right')) publish() {
    this.state.done.push('publish');
    return 'published';
  }
}

/** Joined a release later: `left` renamed `leftStep`, and the join with it. */
class JoinedRenamed extends Flow<{ done: string[] }> {
  static flowName = 'Joined';
  initialState = { done: [] as string[] };
  @start() begin() {
    return 'go';
  }
  @listen('begin') leftStep() {
    this.state.done.push('left');
    return 'l';
  }
  @listen('begin') right() {
    this.state.done.push('right');
    return 'r';
  }
  @listen(and('leftStep', 'right')) publish() {
    this.state.done.push('publish');
    return 'published';
  }
}

describe('a saved run that completed a method renamed since, which a join still waits on', () => {
  // Trial (flows, second) 1: the resume ran `right`, never `publish`, and said "Finished".
  it('is refused before anything runs, naming the completed method', async () => {
    const provider = new InMemoryProvider();
    const flow = new Joined({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    });
    const running = flow.kickoff();
    // begin and left completed (two saves); right waits for `release`.
    const finished = async () =>
      (await provider.list('mem')).filter((checkpoint) => checkpoint.trigger === 'method_execution_finished');
    while ((await finished()).length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const afterLeft = (await finished())[1]!;
    release();
    await running;
    const written = (await provider.list('mem')).length;

    const restored = await JoinedRenamed.fromCheckpoint(
      { restoreFrom: `mem#${afterLeft.id}`, provider },
      { bus: new EventBus() },
    );
    const refusal = await restored.kickoff().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refusal?.message).toContain('completed "left", whose listeners would never run');
    expect(refusal?.message).toContain('its methods are begin, leftStep, right, publish');
    expect(await provider.list('mem')).toHaveLength(written);
  });
});

describe('rerunFrom on a flow that saves nothing', () => {
  // Trial (flows) 5: a class without @persist and without a checkpoint config was told "no saves of
  // flow state" in the default location, as if its id were wrong.
  it('names what makes a flow save its state', async () => {
    class Unsaved extends Flow {
      @start() first() {
        return 1;
      }
      @listen('first') second() {
        return 2;
      }
    }
    await expect(
      new Unsaved({ bus: new EventBus() }).kickoff({ inputs: { id: 'u-1' }, rerunFrom: 'second' }),
    ).rejects.toThrow(/flow "Unsaved" saves none: add @persist\(\) to the class/);
  });
});
