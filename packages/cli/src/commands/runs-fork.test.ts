import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { forkOptions, forkRefusalInCliWords } from './runs-fork.js';

describe('crewline runs fork options', () => {
  it('numbers --set-output tasks from 1, as checkpoint info shows them, and reads --input as checkpoint fork does', () => {
    expect(
      forkOptions(
        {
          input: ['topic=kelp', 'pages:=3'],
          'set-output': ['2=a shorter outline', '4=line one\nline two = kept'],
          'idempotency-key': 'k-7',
          'max-attempts': '2',
        },
        'crewline',
      ),
    ).toEqual({
      inputs: { topic: 'kelp', pages: 3 },
      taskOutputs: { 1: 'a shorter outline', 3: 'line one\nline two = kept' },
      idempotencyKey: 'k-7',
      maxAttempts: 2,
    });
    expect(forkOptions({}, 'crewline')).toEqual({});
    expect(forkOptions({ 'rerun-from': 'shape', input: ['topic=reefs'] }, 'crewline')).toEqual({
      rerunFrom: 'shape',
      inputs: { topic: 'reefs' },
    });
  });

  it('refuses a --set-output that names no task number from 1', () => {
    for (const pair of ['0=text', 'first=text', 'no equals sign']) {
      expect(() => forkOptions({ 'set-output': [pair] }, 'crewline')).toThrow(
        expect.objectContaining({
          message: expect.stringMatching(/must look like N=text, N being a task number from 1/),
        }),
      );
    }
  });
});

describe('forkRefusalInCliWords', () => {
  // The trial: `runs fork ec5f --input topik=kelp` said `fork("ec5f…"): … (did you mean "topic"?)`.
  it("says the worker's refusal of an unknown input with the command's flag, without the call's name", () => {
    const refusal = new CrewlineError(
      'worker',
      'invalid_argument',
      'fork("ec5f0000-0000-0000-0000-000000000000"): input "topik" is not one the run knows (known: topic); check its spelling (did you mean "topic"?), or enqueue a new run for new inputs',
      {
        details: {
          runId: 'ec5f0000-0000-0000-0000-000000000000',
          unknownInput: 'topik',
          known: ['topic'],
          nearest: 'topic',
        },
      },
    );
    const said = forkRefusalInCliWords(refusal, 'crewline');
    expect(CrewlineError.hasCode(said, 'invalid_argument')).toBe(true);
    expect((said as Error).message).toBe(
      '[cli] input "topik" is not one the run knows (known: topic); check its spelling (did you mean --input topic=…?), or queue a new run for new inputs with crewline runs enqueue',
    );
    expect((said as Error).message).not.toContain('fork("');
    const other = new CrewlineError('worker', 'invalid_argument', 'fork("x"): nothing to run');
    expect(forkRefusalInCliWords(other, 'crewline')).toBe(other);
  });
});
