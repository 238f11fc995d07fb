import { z } from 'zod';
import { formatIssues, stateError } from './errors.js';

/**
 * What one model's tokens cost, in US dollars per million tokens, as the user's provider bills them.
 * crewline ships no prices of its own: prices change and differ per account, and a made-up one would
 * be worse than none.
 */
export interface ModelPrice {
  /** Dollars per million input tokens that were not read from a prompt cache. Required. */
  inputPerMillion: number;
  /** Dollars per million output tokens (reasoning tokens included, as providers count them). Required. */
  outputPerMillion: number;
  /** Dollars per million input tokens read from a prompt cache. Default: `inputPerMillion`. */
  cachedInputPerMillion?: number;
}

/**
 * Prices by model id, exactly as checkpoints store it: `'openai:gpt-4o'`, `'anthropic:claude-…'`, or
 * the name a model is registered under in `models`. Offline models (`offline:…`) always cost 0.
 */
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

const dollars = z
  .number({ error: 'must be a number of US dollars per million tokens' })
  .nonnegative('must not be negative');

const modelPriceSchema = z.strictObject({
  inputPerMillion: dollars,
  outputPerMillion: dollars,
  cachedInputPerMillion: dollars.optional(),
});

const modelPricesSchema = z.record(z.string().min(1, 'a model id must not be empty'), modelPriceSchema);

/**
 * Checks a price table given in `crewline.config.ts` (`modelPrices`) or as an option; `where` names
 * it in the error. A negative, NaN or missing price, or an unknown field, is an `invalid_config`
 * error naming the model id and the field. `undefined` is an empty table.
 */
export function parseModelPrices(value: unknown, where = 'modelPrices'): ModelPrices {
  if (value === undefined) return {};
  const parsed = modelPricesSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw stateError(
    'invalid_config',
    `${where} is not valid (${formatIssues(parsed.error.issues)}); give each model id its US dollars per million tokens, e.g. { 'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 } }`,
  );
}
