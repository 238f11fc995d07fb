import type { EventRecord } from '@crewline/events';
import type { ModelPrice, ModelPrices } from './model-prices.js';

/** Model ids of crewline's offline model start with this: its calls cost nothing. */
export const OFFLINE_MODEL_PREFIX = 'offline:';

/**
 * The AI SDK `provider` of crewline's offline model, which `llm_call_completed` records: the offline
 * model registered under a name of the project's own (`'readme:model'`) costs nothing too.
 */
export const OFFLINE_PROVIDER = 'offline';

/** `priced`: from the price table; `offline`: crewline's offline model, 0; `unknown`: no price given. */
export type ModelCostStatus = 'priced' | 'offline' | 'unknown';

/** Tokens of one model's calls. `cachedInput` is the part of `input` read from a prompt cache. */
export interface ModelTokens {
  input: number;
  cachedInput: number;
  output: number;
  total: number;
}

/** What one model's completed calls cost. */
export interface ModelCost {
  /** The model id as the checkpoint stores it (`openai:gpt-4o`). */
  model: string;
  calls: number;
  tokens: ModelTokens;
  status: ModelCostStatus;
  /** US dollars; `null` when the model has no price (never a guess). */
  usd: number | null;
}

/**
 * `none`: no model call; `offline`: only the offline model; `priced`: every model priced (or
 * offline); `partial`: some models priced, some not; `unknown`: no model that costs money is priced.
 */
export type RunCostStatus = 'none' | 'offline' | 'priced' | 'partial' | 'unknown';

/** What the model calls a checkpoint records cost, per model and in all. */
export interface RunCost {
  status: RunCostStatus;
  /** US dollars in all; `null` unless every model is priced or offline. */
  usd: number | null;
  /** US dollars of the priced models only: the whole cost when `status` is `priced`, a lower bound when `partial`. */
  pricedUsd: number;
  /** One entry per model id, in the order of their first call. */
  models: ModelCost[];
  /** The ids of models with calls and no price. */
  unpriced: string[];
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function priceOf(price: ModelPrice, tokens: ModelTokens): number {
  // Providers count cache reads inside the input tokens (the AI SDK's inputTokenDetails.cacheReadTokens).
  const cached = Math.min(tokens.cachedInput, tokens.input);
  const uncached = tokens.input - cached;
  return (
    (uncached * price.inputPerMillion +
      cached * (price.cachedInputPerMillion ?? price.inputPerMillion) +
      tokens.output * price.outputPerMillion) /
    1_000_000
  );
}

/**
 * The cost of the model calls recorded in `events` (a checkpoint's history): each
 * `llm_call_completed` event names its model id and its usage, so a run that mixes models is priced
 * per model. A call whose completion no checkpoint reached is not in the history and not counted.
 * The one place crewline turns tokens into money: the CLI, the explorer and the worker read it here.
 */
export function runCost(events: readonly EventRecord[], prices: ModelPrices = {}): RunCost {
  const byModel = new Map<string, ModelCost>();
  const offlineModels = new Set<string>();
  for (const event of events) {
    if (event.type !== 'llm_call_completed' || typeof event.model !== 'string') continue;
    let entry = byModel.get(event.model);
    if (entry === undefined) {
      entry = {
        model: event.model,
        calls: 0,
        tokens: { input: 0, cachedInput: 0, output: 0, total: 0 },
        status: 'unknown',
        usd: null,
      };
      byModel.set(event.model, entry);
    }
    if (event.provider === OFFLINE_PROVIDER) offlineModels.add(event.model);
    const usage = (event.usage ?? {}) as Record<string, unknown>;
    entry.calls += 1;
    entry.tokens.input += count(usage.inputTokens);
    entry.tokens.cachedInput += count(usage.cachedInputTokens);
    entry.tokens.output += count(usage.outputTokens);
    entry.tokens.total += count(usage.totalTokens) || count(usage.inputTokens) + count(usage.outputTokens);
  }
  const models = [...byModel.values()];
  let pricedUsd = 0;
  let priced = 0;
  for (const entry of models) {
    const price = Object.hasOwn(prices, entry.model) ? prices[entry.model] : undefined;
    if (entry.model.startsWith(OFFLINE_MODEL_PREFIX) || offlineModels.has(entry.model)) {
      entry.status = 'offline';
      entry.usd = 0;
    } else if (price !== undefined) {
      entry.status = 'priced';
      entry.usd = priceOf(price, entry.tokens);
      pricedUsd += entry.usd;
      priced += 1;
    }
  }
  const unpriced = models.filter((entry) => entry.status === 'unknown').map((entry) => entry.model);
  const status: RunCostStatus =
    models.length === 0
      ? 'none'
      : unpriced.length === 0
        ? priced === 0
          ? 'offline'
          : 'priced'
        : priced === 0
          ? 'unknown'
          : 'partial';
  return { status, usd: unpriced.length === 0 ? pricedUsd : null, pricedUsd, models, unpriced };
}

/** A checkpoint's model calls split where its lineage was forked off another one. */
export interface LineageCost {
  /** The calls this lineage made itself (all of them for a lineage that is not a fork). */
  own: RunCost;
  /**
   * The calls its history carries from the checkpoint it was forked from (and that one's own fork
   * parents): another lineage's, so adding up forks counts each call once. `null` when not a fork.
   */
  inherited: RunCost | null;
}

/**
 * {@link runCost} of a checkpoint's `events` split into what its lineage paid itself and what it
 * inherited: `forkPointEvents` is the history of the checkpoint the lineage was forked from
 * (`undefined` when it is not a fork, or that checkpoint can no longer be read: then every call
 * counts as its own). A fork's history starts with those events; they are told apart by event id.
 * The CLI's `info`, the explorer and the worker's `runs show` all split a fork's cost here.
 */
export function lineageCost(
  events: readonly EventRecord[],
  forkPointEvents: readonly EventRecord[] | undefined,
  prices: ModelPrices = {},
): LineageCost {
  if (forkPointEvents === undefined) return { own: runCost(events, prices), inherited: null };
  const inheritedIds = new Set(forkPointEvents.map((event) => event.eventId));
  return {
    own: runCost(
      events.filter((event) => !inheritedIds.has(event.eventId)),
      prices,
    ),
    inherited: runCost(
      events.filter((event) => inheritedIds.has(event.eventId)),
      prices,
    ),
  };
}

const cents = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});
const underADollar = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const underACent = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  maximumSignificantDigits: 2,
});

/**
 * US dollars with a precision that fits the amount: cents from $1 (`$12.34`), four decimals below
 * (`$0.0123`), two significant digits below a cent (`$0.00042`), so a cheap run never reads `$0.00`.
 */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd >= 1) return cents.format(usd);
  if (usd >= 0.01) return underADollar.format(usd);
  return underACent.format(usd);
}

function tokenText(tokens: ModelTokens): string {
  const cached = tokens.cachedInput > 0 ? ` (${tokens.cachedInput.toLocaleString('en-US')} cached)` : '';
  return `${tokens.input.toLocaleString('en-US')} in${cached}, ${tokens.output.toLocaleString('en-US')} out`;
}

/** One model's line: `openai:gpt-4o: 3 calls, 1,200 in (200 cached), 340 out: $0.0061`. */
export function describeModelCost(cost: ModelCost): string {
  const price =
    cost.status === 'offline'
      ? '$0 (offline model)'
      : cost.usd === null
        ? 'unknown (no price in modelPrices)'
        : formatUsd(cost.usd);
  return `${cost.model}: ${cost.calls} call${cost.calls === 1 ? '' : 's'}, ${tokenText(cost.tokens)}: ${price}`;
}

/**
 * The cost as one line: `$0.0123`, `$0 (offline model)`, or what is unknown and how to price it. Every
 * reader (CLI, explorer, worker) shows the same words.
 */
export function describeRunCost(cost: RunCost): string {
  const hint = 'add their prices to modelPrices in crewline.config.ts';
  const unpriced = cost.models
    .filter((entry) => entry.status === 'unknown')
    .map((entry) => `${entry.model}, ${entry.tokens.total.toLocaleString('en-US')} tokens`)
    .join('; ');
  switch (cost.status) {
    case 'none':
      return '$0 (no model calls)';
    case 'offline':
      return '$0 (offline model)';
    case 'priced':
      return formatUsd(cost.pricedUsd);
    case 'partial':
      return `at least ${formatUsd(cost.pricedUsd)}: no price for ${unpriced}; ${hint}`;
    case 'unknown':
      return `unknown: no price for ${unpriced}; ${hint}`;
  }
}
