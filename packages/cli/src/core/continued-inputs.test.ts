import { EventBus } from '@crewline/events';
import { Flow, start } from '@crewline/runtime';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { sampleCheckpoints } from '../test-support/sample-tree.js';
import { continuedInputs } from './continued-inputs.js';
import { viewDocument } from './document-view.js';

class CountingFlow extends Flow<{ count: number }> {
  initialState = { count: 0 };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
}

describe('continuedInputs', () => {
  it('gives a flow only the inputs changed (merged into its state, saved ones would undo its methods)', async () => {
    const provider = new InMemoryProvider();
    await new CountingFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['flow_finished'] },
    }).kickoff({
      inputs: { count: 1, topic: 'kelp' },
    });
    const [stored] = await provider.list('mem');
    const view = viewDocument(await readDocument(provider, 'mem', stored!.id));
    expect(view.inputs).toEqual({ count: 1, topic: 'kelp' });
    expect(continuedInputs(view, { topic: 'tea' })).toEqual({ topic: 'tea' });
    expect(continuedInputs(view, undefined)).toBeUndefined();
    expect(continuedInputs(view, {})).toBeUndefined();
  });

  it('gives a crew every saved input with the changes over them', async () => {
    const sample = await sampleCheckpoints();
    const view = viewDocument(await readDocument(sample.provider, sample.location, sample.main[0]!.id));
    expect(continuedInputs(view, { audience: 'everyone' })).toEqual({
      ...view.inputs,
      audience: 'everyone',
    });
  });
});
