import { CrewlineError } from '@crewline/events';
import { type NothingToRun, nothingToRunMessage } from '@crewline/runtime/internal';
import { describe, expect, it } from 'vitest';
import { nothingToRunInWords, runAgainWordsOfBrowser } from './nothing-to-run.js';

const nothingToRun: NothingToRun = {
  checkpointId: '20261128T050000000-0a1b2c3d',
  kind: 'crew',
  mode: 'fork',
  reason: 'every task of crew "research" is completed',
};

// What the runtime throws (restore/check-continuation.ts): the library's words.
const refusal = new CrewlineError('runtime', 'invalid_argument', nothingToRunMessage(nothingToRun), {
  details: { nothingToRun },
});

describe("the refusal of a continuation with nothing to run, in the terminal UI's words", () => {
  it('names the Tasks tab, not the library option or the CLI flag; keeps the code and the details', () => {
    expect(refusal.message).toContain('taskOutputs');
    const said = nothingToRunInWords(refusal, runAgainWordsOfBrowser);
    expect(said?.message).toContain("edit a task's output in the Tasks tab");
    expect(said?.message).toContain('so the fork would write no checkpoint and make no branch');
    expect(said?.message).not.toContain('taskOutputs');
    expect(said?.message).not.toContain('--set-output');
    expect(said?.code).toBe('invalid_argument');
    expect(said?.details?.nothingToRun).toEqual(nothingToRun);
  });

  it('leaves any other error alone', () => {
    expect(nothingToRunInWords(new Error('x'), runAgainWordsOfBrowser)).toBeUndefined();
    expect(
      nothingToRunInWords(new CrewlineError('runtime', 'invalid_argument', 'other'), runAgainWordsOfBrowser),
    ).toBeUndefined();
  });
});
