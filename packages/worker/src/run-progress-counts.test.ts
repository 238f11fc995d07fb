import type { EventRecord } from '@crewline/events';
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointProvider,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { expect, it } from 'vitest';
import { readRunProgress } from './run-progress.js';
import type { RunRecord } from './run-record.js';

function event(sequence: number, fields: Record<string, unknown>): EventRecord {
  return {
    type: 'llm_call_completed',
    eventId: `event-${sequence}`,
    sequence,
    timestamp: '2026-11-27T01:00:00.000Z',
    ...fields,
  } as EventRecord;
}

it('counts the model calls and tokens its cost counts, so totals and per-model lines agree', async () => {
  const events = [
    event(1, { model: 'openai:gpt-4o', usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 } }),
    // No model id: the cost cannot price it, so the totals do not count it either.
    event(2, { usage: { inputTokens: 999, outputTokens: 999 } }),
    event(3, { model: 'offline:echo', usage: { inputTokens: 10, outputTokens: -5 } }),
  ];
  const metadata = {
    id: 'c1',
    createdAt: '2026-11-27T01:00:00.000Z',
    lineageId: 'lineage',
    parentId: null,
    branch: 'main',
    trigger: 'llm_call_completed',
    entities: [],
    eventCount: events.length,
  };
  const document: CheckpointDocument = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    libraryVersion: '0.0.0',
    metadata,
    inputs: { json: {} },
    entities: [],
    events,
  };
  const provider = {
    list: async () => [{ ...metadata, reference: 'memory#c1' } as unknown as StoredCheckpoint],
    read: async () => ({ document }),
  } as unknown as CheckpointProvider;
  const run = { id: 'run', status: 'completed', lineageId: 'lineage' } as RunRecord;
  const progress = await readRunProgress(provider, 'memory', run, {
    'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
  });
  const byModel = progress.cost.models;
  expect(byModel.map((model) => model.calls)).toEqual([1, 1]);
  expect(progress.modelCalls).toBe(2);
  expect(progress.tokens).toEqual({ input: 110, output: 20, total: 130 });
  // Priced at the queue's modelPrices.
  expect(progress.cost).toMatchObject({ status: 'priced', usd: (100 * 2.5 + 20 * 10) / 1_000_000 });
});
