import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

let seen: unknown = 'unset';

class Logout extends Flow<{ token: string | undefined; user: string }> {
  initialState = { token: 'initial-token' as string | undefined, user: 'ada' };
  @start() clear() {
    this.state.token = undefined;
    return 'cleared';
  }
  @listen('clear') async confirm() {
    seen = this.state.token;
    await this.ask('Log out?');
    return `token=${String(this.state.token)}`;
  }
}

describe('a restored flow state, a field set to undefined by a completed method', () => {
  // Found by a review: redaction replaced the encoded value's annotation of the field (its `meta`
  // mirrors the state's keys), and the checkpoint could not be read back ("damaged").
  it('named like a credential (token) can be resumed, and the field is undefined again', async () => {
    const provider = new InMemoryProvider();
    const flow = new Logout({ bus: new EventBus(), checkpoint: { location: 'mem', provider } });
    const paused = await flow.kickoff();
    expect(paused.status).toBe('paused');
    expect(seen).toBeUndefined();
    const latest = (await provider.list('mem')).at(-1)!;
    const restored = await Logout.fromCheckpoint(
      { restoreFrom: `mem#${latest.id}`, provider },
      { bus: new EventBus() },
    );
    const result = await restored.resume('yes');
    expect(seen).toBeUndefined();
    expect(result.output).toBe('token=undefined');
  });
});
