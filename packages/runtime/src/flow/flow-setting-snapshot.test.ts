import { type CheckpointConfigInput, SettledValues } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { Flow, start } from './index.js';

class Counter extends Flow<{ value: number }> {
  @start()
  count() {
    this.state.value += 1;
  }
}

function settingOf(snapshot: { data: unknown }): unknown {
  return (snapshot.data as { checkpoint: unknown }).checkpoint;
}

describe("a flow's checkpoint setting in its snapshot", () => {
  it('is the same settled object while unchanged, and stored anew once changed in place', () => {
    const checkpoint: CheckpointConfigInput = {
      location: './flow-checkpoints',
      onEvents: ['method_execution_finished'],
    };
    const flow = new Counter({ checkpoint });
    const settled = new SettledValues();
    const first = settingOf(flow.snapshotEntity(settled));
    expect(settingOf(flow.snapshotEntity(settled))).toBe(first);
    expect(settled.has(first as object)).toBe(true);
    checkpoint.location = './elsewhere';
    expect(settingOf(flow.snapshotEntity(settled))).toEqual({
      location: './elsewhere',
      onEvents: ['method_execution_finished'],
    });
  });
});
