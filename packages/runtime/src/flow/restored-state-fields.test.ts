import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

class Cleanup extends Flow<{ draft: string; scratch?: string[] }> {
  initialState = { draft: '', scratch: ['temp'] as string[] };
  @start() tidy() {
    delete this.state.scratch;
    this.state.draft = 'clean';
    return 'tidy';
  }
  @listen('tidy') publish() {
    return Object.keys(this.state).sort().join(',');
  }
}

/** Cleanup's code a release later: a field added to its initial state, which `publish` uses. */
class CleanupWithReviewers extends Flow<{ draft: string; scratch?: string[]; reviewers: string[] }> {
  static flowName = 'Cleanup';
  initialState = { draft: '', scratch: ['temp'] as string[], reviewers: ['ada'] };
  @start() tidy() {
    delete this.state.scratch;
    this.state.draft = 'clean';
    return 'tidy';
  }
  @listen('tidy') publish() {
    return `${Object.keys(this.state).sort().join(',')} by ${this.state.reviewers.join(',')}`;
  }
}

describe('a resumed flow state', () => {
  it('is the saved one: a field a completed method deleted does not come back from initialState', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new Cleanup({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    expect(uninterrupted.output).toBe('draft,id');
    const afterTidy = (await provider.list('mem'))[0]!;
    const restored = await Cleanup.fromCheckpoint(
      { restoreFrom: `mem#${afterTidy.id}`, provider },
      { bus: new EventBus() },
    );
    expect(restored.state.scratch).toBeUndefined();
    const resumed = await restored.kickoff();
    expect(resumed.output).toBe('draft,id');
    expect(Object.keys(resumed.state).sort()).toEqual(['draft', 'id']);
  });

  // A review of c45d413 (which restored the saved state alone): a field added to initialState since
  // the save was missing after a resume, and the new code's methods met undefined.
  it('gets a field added to initialState since the save, with its initial value', async () => {
    const provider = new InMemoryProvider();
    await new Cleanup({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const afterTidy = (await provider.list('mem'))[0]!;
    const restored = await CleanupWithReviewers.fromCheckpoint(
      { restoreFrom: `mem#${afterTidy.id}`, provider },
      { bus: new EventBus() },
    );
    expect(restored.state.reviewers).toEqual(['ada']);
    expect(restored.state.scratch).toBeUndefined();
    const resumed = await restored.kickoff();
    expect(resumed.output).toBe('draft,id,reviewers by ada');
  });
});
