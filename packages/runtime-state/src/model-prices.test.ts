import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { parseModelPrices } from './model-prices.js';

function refusal(value: unknown): CrewlineError {
  try {
    parseModelPrices(value, 'project config: modelPrices');
  } catch (error) {
    if (CrewlineError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseModelPrices', () => {
  it('accepts prices by model id and treats undefined as no prices', () => {
    const prices = {
      'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 },
    };
    expect(parseModelPrices(prices)).toEqual(prices);
    expect(parseModelPrices(undefined)).toEqual({});
  });

  it('refuses a negative price, naming the model id and the field', () => {
    const error = refusal({ 'openai:gpt-4o': { inputPerMillion: -1, outputPerMillion: 10 } });
    expect(error.code).toBe('invalid_config');
    expect(error.message).toContain('project config: modelPrices is not valid');
    expect(error.message).toContain('openai:gpt-4o.inputPerMillion: must not be negative');
  });

  it('refuses NaN, a missing price and a misspelled field', () => {
    expect(
      refusal({ 'openai:gpt-4o': { inputPerMillion: Number.NaN, outputPerMillion: 10 } }).message,
    ).toContain('openai:gpt-4o.inputPerMillion: must be a number of US dollars per million tokens');
    expect(refusal({ 'openai:gpt-4o': { inputPerMillion: 2.5 } }).message).toContain(
      'openai:gpt-4o.outputPerMillion',
    );
    expect(
      refusal({ 'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedPerMillion: 1 } })
        .message,
    ).toContain('cachedPerMillion');
  });
});
