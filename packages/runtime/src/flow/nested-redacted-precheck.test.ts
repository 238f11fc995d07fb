// The check before a continuation (checkContinuation: the CLI, the terminal UI, the explorer) and a
// flow kicked off in another flow's method whose saved state holds [REDACTED]. Review R4a: checking
// every nested field up front refused a parent whose method hands its child the key again. Review R5:
// checking none let a child whose own method set its key be refused only as it started, after the
// parent's other methods had run and paid. Each kickoff now records the names of the inputs it was
// given; the fields among them are left to the method that hands them on, the others refused first.
import { EventBus } from '@crewline/events';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { checkContinuation } from '../restore/check-continuation.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import { Flow, listen, start } from './index.js';

const directory = temporaryDirectory('crewline-nested-redacted-precheck-');
afterAll(() => directory.cleanup());

const secret = 'sk-live-0123456789abcdefghij';
let childFails = true;
afterEach(() => {
  childFails = true;
});

/** Sets its own key when its first method runs: nothing can give it back. */
class KeyMaker extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() login() {
    this.state.apiKey = secret;
  }
  @listen('login') work() {
    if (childFails) throw new Error('the service went away');
    return this.state.apiKey === secret ? 'worked' : 'no key';
  }
}

/** Handed its key by the method that kicks it off. */
class KeyTaker extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() login() {
    return 'logged in';
  }
  @listen('login') work() {
    if (childFails) throw new Error('the service went away');
    return this.state.apiKey === secret ? 'worked' : 'no key';
  }
}

class MakerParent extends Flow<{ topic: string }> {
  initialState = { topic: 'kelp' };
  @start() async delegate() {
    return (await new KeyMaker().kickoff()).output;
  }
}

class TakerParent extends Flow<{ topic: string }> {
  initialState = { topic: 'kelp' };
  @start() async delegate() {
    return (await new KeyTaker().kickoff({ inputs: { apiKey: secret } })).output;
  }
}

/** The latest checkpoint of a run of `Parent` whose child failed after its first method. */
async function failedRun(Parent: typeof MakerParent | typeof TakerParent, name: string) {
  const location = `${directory.path}/${name}`;
  await new Parent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } })
    .kickoff()
    .catch(() => undefined);
  childFails = false;
  return { location, document: (await loadRestoreTarget(location, { bus: new EventBus() })).document };
}

describe('the check before a continuation, of a nested flow holding [REDACTED]', () => {
  it('refuses, before anything runs, a field the nested flow set itself, naming that flow', async () => {
    const { document } = await failedRun(MakerParent, 'maker');
    let refusal: unknown;
    try {
      checkContinuation(document, { mode: 'resume' });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ code: 'invalid_argument', details: { redactedState: ['apiKey'] } });
    expect(String(refusal)).toContain('flow "KeyMaker" (kicked off in another flow\'s method)');
  });

  it('leaves a field the method that kicks it off hands on to that method: the run continues with the key', async () => {
    const { document, location } = await failedRun(TakerParent, 'taker');
    expect(() => checkContinuation(document, { mode: 'resume' })).not.toThrow();
    const restored = await TakerParent.fromCheckpoint({ restoreFrom: location }, { bus: new EventBus() });
    expect((await restored.kickoff()).output).toBe('worked');
  });
});
