import { describe, expect, it } from 'vitest';
import { parseRunRequest } from './explorer-runs.js';

describe('parseRunRequest', () => {
  it('takes a fork with a branch, inputs and outputs', () => {
    expect(
      parseRunRequest({
        checkpoint: 'c1',
        mode: 'fork',
        branch: 'what-if/b',
        inputs: ['a=1'],
        outputs: ['1=x'],
      }),
    ).toEqual({ checkpoint: 'c1', mode: 'fork', branch: 'what-if/b', inputs: ['a=1'], outputs: ['1=x'] });
  });

  it('refuses a branch name a fork could not write, before any run starts', () => {
    for (const branch of ['bad name', 'a/../b', '/x', 'x/'])
      expect(() => parseRunRequest({ checkpoint: 'c1', mode: 'fork', branch }), branch).toThrow(
        /branch name .* is not allowed; use segments of letters, digits/,
      );
  });
});
