import { describe, expect, it } from 'vitest';
import { forkOptions } from './runs-fork.js';

describe('crewline runs fork options', () => {
  it('numbers --set-output tasks from 1, as checkpoint info shows them, and reads --input as checkpoint fork does', () => {
    expect(
      forkOptions({
        input: ['topic=kelp', 'pages:=3'],
        'set-output': ['2=a shorter outline', '4=line one\nline two = kept'],
        'idempotency-key': 'k-7',
        'max-attempts': '2',
      }),
    ).toEqual({
      inputs: { topic: 'kelp', pages: 3 },
      taskOutputs: { 1: 'a shorter outline', 3: 'line one\nline two = kept' },
      idempotencyKey: 'k-7',
      maxAttempts: 2,
    });
    expect(forkOptions({})).toEqual({});
    expect(forkOptions({ 'rerun-from': 'shape', input: ['topic=reefs'] })).toEqual({
      rerunFrom: 'shape',
      inputs: { topic: 'reefs' },
    });
  });

  it('refuses a --set-output that names no task number from 1', () => {
    for (const pair of ['0=text', 'first=text', 'no equals sign']) {
      expect(() => forkOptions({ 'set-output': [pair] })).toThrow(
        expect.objectContaining({
          message: expect.stringMatching(/must look like N=text, N being a task number from 1/),
        }),
      );
    }
  });
});
