import type { EventRecord } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { ModelPrices } from './model-prices.js';
import { describeModelCost, describeRunCost, formatUsd, lineageCost, runCost } from './run-cost.js';

let sequence = 0;
function completed(model: string, usage: Record<string, number>): EventRecord {
  sequence += 1;
  return {
    type: 'llm_call_completed',
    eventId: `event-${sequence}`,
    sequence,
    timestamp: '2026-11-27T01:00:00.000Z',
    source: { kind: 'llm', id: model, name: model },
    model,
    callId: `call-${sequence}`,
    response: 'answer',
    usage: {
      totalTokens: (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
      cachedInputTokens: 0,
      ...usage,
    },
  };
}

const started: EventRecord = {
  type: 'llm_call_started',
  eventId: 'started',
  sequence: 0,
  timestamp: '2026-11-27T01:00:00.000Z',
  model: 'openai:gpt-4o',
  callId: 'call-x',
  messageCount: 1,
};

// OpenAI's published list price for gpt-4o: $2.50 input, $1.25 cached input, $10 output per million.
const prices: ModelPrices = {
  'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 },
};

describe('runCost', () => {
  it('prices every completed call of a priced model and ignores other events', () => {
    const cost = runCost(
      [
        started,
        completed('openai:gpt-4o', { inputTokens: 1_000_000, outputTokens: 0 }),
        completed('openai:gpt-4o', { inputTokens: 0, outputTokens: 100_000 }),
      ],
      prices,
    );
    expect(cost.status).toBe('priced');
    expect(cost.usd).toBeCloseTo(3.5, 10);
    expect(cost.models).toEqual([
      {
        model: 'openai:gpt-4o',
        calls: 2,
        tokens: { input: 1_000_000, cachedInput: 0, output: 100_000, total: 1_100_000 },
        status: 'priced',
        usd: cost.usd,
      },
    ]);
    expect(describeRunCost(cost)).toBe('$3.50');
  });

  it('prices cached input tokens at the cached price, and at the input price when none is given', () => {
    const events = [
      completed('openai:gpt-4o', { inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 0 }),
    ];
    // 600,000 uncached at $2.50 + 400,000 cached at $1.25.
    expect(runCost(events, prices).usd).toBeCloseTo(1.5 + 0.5, 10);
    const withoutCachedPrice: ModelPrices = {
      'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
    };
    expect(runCost(events, withoutCachedPrice).usd).toBeCloseTo(2.5, 10);
  });

  it('says unknown, with the tokens, for a model without a price: never a number', () => {
    const cost = runCost(
      [completed('anthropic:claude-sonnet-4-5', { inputTokens: 1200, outputTokens: 300 })],
      prices,
    );
    expect(cost.status).toBe('unknown');
    expect(cost.usd).toBeNull();
    expect(cost.unpriced).toEqual(['anthropic:claude-sonnet-4-5']);
    expect(cost.models[0]?.usd).toBeNull();
    expect(describeRunCost(cost)).toBe(
      'unknown: no price for anthropic:claude-sonnet-4-5, 1,500 tokens; add their prices to modelPrices in crewline.config.ts',
    );
    expect(describeModelCost(cost.models[0]!)).toBe(
      'anthropic:claude-sonnet-4-5: 1 call, 1,200 in, 300 out: unknown (no price in modelPrices)',
    );
  });

  it('costs the offline model nothing, whatever a price table says', () => {
    const cost = runCost([completed('offline:test', { inputTokens: 500, outputTokens: 80 })], {
      'offline:test': { inputPerMillion: 100, outputPerMillion: 100 },
    });
    expect(cost).toMatchObject({ status: 'offline', usd: 0, pricedUsd: 0, unpriced: [] });
    expect(describeRunCost(cost)).toBe('$0 (offline model)');
  });

  it('recognises the offline model registered under any name by the provider its calls recorded', () => {
    const offline = {
      ...completed('readme:model', { inputTokens: 120, outputTokens: 40 }),
      provider: 'offline',
    };
    const cost = runCost([offline, offline]);
    expect(cost).toMatchObject({ status: 'offline', usd: 0, unpriced: [] });
    expect(cost.models[0]).toMatchObject({ model: 'readme:model', calls: 2, status: 'offline', usd: 0 });
    expect(describeRunCost(cost)).toBe('$0 (offline model)');
    // A model of another provider under a custom name stays unpriced.
    const real = {
      ...completed('team:writer', { inputTokens: 10, outputTokens: 5 }),
      provider: 'openai.chat',
    };
    expect(runCost([real]).status).toBe('unknown');
  });

  it('gives a mixed run the priced part as a lower bound and names the unpriced model', () => {
    const cost = runCost(
      [
        completed('openai:gpt-4o', { inputTokens: 2000, outputTokens: 1000 }),
        completed('offline:helper', { inputTokens: 10, outputTokens: 10 }),
        completed('myproxy:llama-3.1-70b', { inputTokens: 4000, outputTokens: 500 }),
      ],
      prices,
    );
    expect(cost.status).toBe('partial');
    expect(cost.usd).toBeNull();
    expect(cost.pricedUsd).toBeCloseTo(0.015, 10);
    expect(cost.models.map((entry) => entry.status)).toEqual(['priced', 'offline', 'unknown']);
    expect(describeRunCost(cost)).toBe(
      'at least $0.015: no price for myproxy:llama-3.1-70b, 4,500 tokens; add their prices to modelPrices in crewline.config.ts',
    );
    // Priced and offline models only: the whole cost is known.
    const complete = runCost(
      [
        completed('openai:gpt-4o', { inputTokens: 2000, outputTokens: 1000 }),
        completed('offline:helper', { inputTokens: 1, outputTokens: 1 }),
      ],
      prices,
    );
    expect(complete).toMatchObject({ status: 'priced', unpriced: [] });
    expect(complete.usd).toBeCloseTo(0.015, 10);
  });

  it('is none without model calls', () => {
    expect(runCost([started], prices)).toEqual({
      status: 'none',
      usd: 0,
      pricedUsd: 0,
      models: [],
      unpriced: [],
    });
  });
});

describe('formatUsd', () => {
  it('keeps a precision that fits the amount', () => {
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(1234.5678)).toBe('$1,234.57');
    expect(formatUsd(0.01234)).toBe('$0.0123');
    expect(formatUsd(0.5)).toBe('$0.50');
    expect(formatUsd(0.000425)).toBe('$0.00043');
  });
});

describe('lineageCost', () => {
  const prices: ModelPrices = { 'acme:big': { inputPerMillion: 1_000_000, outputPerMillion: 0 } };
  const research = completed('acme:big', { inputTokens: 2, outputTokens: 1 });
  const write = completed('acme:big', { inputTokens: 3, outputTokens: 1 });

  it('counts the events the fork point holds as inherited, the rest as the lineage own', () => {
    const { own, inherited } = lineageCost([research, write], [research], prices);
    expect(own.models.map((model) => [model.model, model.calls])).toEqual([['acme:big', 1]]);
    expect(own.usd).toBe(3);
    expect(inherited?.usd).toBe(2);
  });

  it('without a fork point every call is the lineage own', () => {
    expect(lineageCost([research, write], undefined, prices)).toEqual({
      own: runCost([research, write], prices),
      inherited: null,
    });
  });
});
