/**
 * How long a run waits before its next attempt after `failures` failed ones: doubling, ±20 %, never
 * more than `maxMs` (the cap comes after the jitter, so the documented longest wait holds).
 */
export function retryDelayMs(failures: number, baseMs: number, maxMs: number, random = Math.random): number {
  const doubled = baseMs * 2 ** Math.max(0, failures - 1);
  return Math.round(Math.min(maxMs, doubled * (0.8 + 0.4 * random())));
}
