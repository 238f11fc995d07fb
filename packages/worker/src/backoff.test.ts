import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './backoff.js';

describe('retryDelayMs', () => {
  it('doubles from the base with ±20 % of jitter', () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 0)).toBe(800);
    expect(retryDelayMs(1, 1000, 60_000, () => 1)).toBe(1200);
    expect(retryDelayMs(3, 1000, 60_000, () => 0.5)).toBe(4000);
  });

  it('never waits longer than the cap, jitter included', () => {
    // 64 s doubled from 1 s: capped at 60 s whatever the jitter (it was capped before it, up to 72 s).
    expect(retryDelayMs(7, 1000, 60_000, () => 1)).toBe(60_000);
    expect(retryDelayMs(20, 1000, 60_000, () => 0.99)).toBe(60_000);
    // Below the cap the jitter still spreads the retries of many runs.
    expect(retryDelayMs(7, 1000, 60_000, () => 0)).toBe(51_200);
  });
});
