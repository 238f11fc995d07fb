import { describe, expect, it } from 'vitest';
import type { TaskView } from '../../core/document-view.js';
import { startOverFlags } from './start-over-flags.js';

const task = (index: number) => ({ index }) as TaskView;

describe('startOverFlags', () => {
  it("names the browser's edits as the command line's flags: task numbers from 1, edited inputs only", () => {
    expect(
      startOverFlags(
        {
          mode: 'fork',
          checkpointId: 'c',
          reference: 'r',
          branch: 'try-it',
          inputs: { topic: 'tea', count: 3, kept: 'as saved' },
          taskOutputs: { 1: 'MY EDITED RESEARCH' },
        },
        { inputs: { topic: 'coffee', count: 2, kept: 'as saved' }, tasks: [task(0), task(1)] },
      ),
    ).toEqual({ branch: 'try-it', inputs: ['topic=tea', 'count:=3'], outputs: ['2=MY EDITED RESEARCH'] });
  });

  it('names the answer of a paused flow', () => {
    expect(
      startOverFlags(
        { mode: 'resume', checkpointId: 'c', reference: 'r', humanInput: 'yes' },
        { inputs: {}, tasks: [] },
      ),
    ).toEqual({ answer: 'yes' });
  });
});
