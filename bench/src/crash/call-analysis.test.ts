// What the crash trials count as repeated and as paid twice, on hand-written call logs: the
// reduced trials only check that the counts are computed, since a random kill decides their values.
import type { CheckpointDocument } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { analyzeCalls } from './call-analysis.js';
import type { RequestEntry } from './call-log.js';

function request(key: string, turn: number): RequestEntry {
  return { kind: 'request', key, conversation: 'Researcher#0', turn, at: 0 };
}

/** A checkpoint whose crew has task 0 running with `answers` assistant messages saved. */
function checkpointWith(answers: number): CheckpointDocument {
  const messages = Array.from({ length: answers }, () => ({ role: 'assistant' }));
  return {
    entities: [
      {
        kind: 'crew',
        data: {
          agents: [{ role: 'Researcher' }],
          tasks: [{ agent: 0, status: 'running', conversation: { messages } }],
        },
      },
    ],
    events: [],
  } as unknown as CheckpointDocument;
}

describe('analyzeCalls', () => {
  const killed = [request('first', 0), request('second', 1), request('third', 2)];
  const resumed = [request('second', 1), request('third', 2)];

  it('counts an answer that arrived but was not checkpointed as paid twice, not as repeated', () => {
    const calls = analyzeCalls({
      killed,
      resumed,
      arrived: new Set(['first', 'second']),
      checkpoint: checkpointWith(1),
      referenceKeys: new Set(['first', 'second', 'third']),
    });
    expect(calls.repeated).toEqual([]);
    expect(calls.arrived).toBe(2);
    expect(calls.paidTwice.map((call) => call.key)).toEqual(['second']);
    expect(calls.paidTwiceUncheckpointed.map((call) => call.key)).toEqual(['second']);
    // 'third' was in flight: made again, but never paid for twice.
    expect(calls.remade).toBe(2);
    expect(calls.checkpointedNotArrived).toBe(0);
  });

  it('counts a checkpointed answer made again as repeated and as paid twice', () => {
    const calls = analyzeCalls({
      killed,
      resumed,
      arrived: new Set(['first', 'second']),
      checkpoint: checkpointWith(2),
      referenceKeys: new Set(['first', 'second', 'third']),
    });
    expect(calls.repeated.map((call) => call.key)).toEqual(['second']);
    expect(calls.paidTwice.map((call) => call.key)).toEqual(['second']);
    expect(calls.paidTwiceUncheckpointed).toEqual([]);
  });

  it('flags a checkpointed answer the call log never saw arrive', () => {
    const calls = analyzeCalls({
      killed,
      resumed: [],
      arrived: new Set(['first']),
      checkpoint: checkpointWith(2),
      referenceKeys: new Set(),
    });
    expect(calls.checkpointedNotArrived).toBe(1);
  });
});
