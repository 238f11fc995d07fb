/** How long a run waits before its next attempt after `failures` failed ones: doubling, capped, ±20 %. */
export function retryDelayMs(failures: number, baseMs: number, maxMs: number, random = Math.random): number {
  const doubled = baseMs * 2 ** Math.max(0, failures - 1);
  const capped = Math.min(maxMs, doubled);
  return Math.round(capped * (0.8 + 0.4 * random()));
}
