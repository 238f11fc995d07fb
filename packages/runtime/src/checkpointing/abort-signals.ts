/**
 * One signal that aborts when any of `signals` does — a caller's, the run's own (a flow stopped from
 * outside, an enclosing run), the run's fence (another process took the run over) — each counted
 * once; `undefined` when none is given.
 */
export function anyAbortSignal(signals: readonly (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = [...new Set(signals.filter((signal) => signal !== undefined))];
  return present.length <= 1 ? present[0] : AbortSignal.any(present);
}
