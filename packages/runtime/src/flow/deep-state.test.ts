// What a run writes can be read back: a value nested as deeply as encoding allows restores, and one
// nested deeper is refused when it is encoded (a typed too_large naming the fix) instead of being
// written into a checkpoint that reading then refuses.
import { CrewlineError, EventBus } from '@crewline/events';
import { MAX_VALUE_DEPTH } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, start } from './index.js';

/** `levels` nested objects: `{ next: { next: ... 'leaf' } }`. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level += 1) value = { next: value };
  return value;
}

function depthOf(value: unknown): number {
  let depth = 0;
  let current = value as { next?: unknown } | string;
  while (typeof current === 'object') {
    depth += 1;
    current = current.next as typeof current;
  }
  return depth;
}

let treeLevels = 0;

class DeepStateFlow extends Flow<{ tree?: unknown }> {
  @start()
  grow() {
    this.state.tree = nested(treeLevels);
    return 'grown';
  }
}

function run(levels: number) {
  treeLevels = levels;
  const provider = new InMemoryProvider();
  const flow = new DeepStateFlow({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
  });
  return { provider, result: flow.kickoff() };
}

describe('flow state nested deeply', () => {
  it('restores from its checkpoint at the deepest nesting encoding accepts', async () => {
    // The state object is one level, the tree the rest.
    const { provider, result } = run(MAX_VALUE_DEPTH - 1);
    await result;
    const [checkpoint] = await provider.list('mem');
    expect(checkpoint).toBeDefined();
    const restored = await DeepStateFlow.fromCheckpoint(
      { restoreFrom: `mem#${checkpoint!.id}`, provider },
      { bus: new EventBus() },
    );
    expect(depthOf(restored.state.tree)).toBe(MAX_VALUE_DEPTH - 1);
  });

  it('is refused with too_large one level deeper, and no unreadable checkpoint is written', async () => {
    const { provider, result } = run(MAX_VALUE_DEPTH);
    const refusal = await result.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CrewlineError.isInstance(refusal), String(refusal)).toBe(true);
    expect(refusal).toMatchObject({ code: 'too_large' });
    expect((refusal as Error).message).toContain(`nested more than ${MAX_VALUE_DEPTH} levels deep`);
    expect(await provider.list('mem')).toEqual([]);
  });
});
