import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

let built = 0;

/** A flow whose initial state is made by a method (which may be costly, or count its calls). */
class Steps extends Flow<{ n: number }> {
  initialState() {
    built += 1;
    return { n: 0 };
  }
  @start() one() {
    this.state.n += 1;
    return 1;
  }
  @listen('one') two() {
    this.state.n += 1;
    return 2;
  }
  @listen('two') three() {
    this.state.n += 1;
    return 3;
  }
  @listen('three') four() {
    this.state.n += 1;
    return 4;
  }
}

describe('initialState() as a method', () => {
  // A review of 69c0c84: the fields a method deleted were found by calling initialState() again at
  // every method completion (7 calls in this 4-method flow, 2 before).
  it('is called when the state is made, not again at each method completion', async () => {
    built = 0;
    const result = await new Steps({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider: new InMemoryProvider() },
    }).kickoff();
    expect(result.state.n).toBe(4);
    expect(built).toBeLessThanOrEqual(2);
  });
});
