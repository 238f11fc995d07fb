import { CrewlineError } from '@crewline/events';

// The `conflict` errors of fenced lineage heads (see `LeaseRequest` in the provider contract), in the
// words every provider uses; `component` is the provider that refuses (`provider-sqlite`...). What a
// lease fences is named a lineage, as `crewline checkpoint list` shows it (its RUN column): called
// "run", its id read as the id of a run in a queue (`crewline runs list`), which nobody could find.

/** `lineage "…"`, how every refusal here names what a lease fences. */
function lineageName(lineageId: string): string {
  return `lineage "${lineageId}"`;
}

/** "850 ms", "12.3 s", "4 min 5 s": how long a lease has left, for people. */
function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * Someone else continues the lineage: names the holder and how long its lease has left (at least 1 ms).
 * `atClaim`: refused before the run started (`details.atClaim`), not while it wrote.
 * `holderRunsHere`: see {@link leaseHeldByOther}.
 */
function heldByOther(
  component: string,
  lineageId: string,
  holder: string,
  expiresInMs: number,
  consequence: string,
  atClaim = false,
  holderRunsHere = false,
): CrewlineError {
  const left = Math.max(1, Math.round(expiresInMs));
  return new CrewlineError(component, 'conflict', leaseHeldMessage(lineageId, holder, left, consequence), {
    details: {
      lineageId,
      holder,
      expiresInMs: left,
      ...(atClaim ? { atClaim } : {}),
      ...(holderRunsHere ? { holderRunsHere } : {}),
    },
  });
}

/**
 * What to do about a lineage someone else continues, `forkInstead` naming how to fork instead: the
 * option of the API by default, a command line's flag where a command line says it.
 * `holderRunsHere`: the store saw the holder's process running on this machine (see
 * {@link leaseHeldByOther}); otherwise it may have died where the store cannot see it (another
 * machine or container), and then its lease runs out. A holder the store sees dead on this machine is
 * taken over at once, so it is never the one a refusal names. `thenResume` follows the wait: how to
 * continue once it has ended, where that is a different gesture (a page's button).
 * `notRunningPid`: the store found no process with the holder's pid on this machine
 * (`details.holderNotRunningHere`, the pid in `details.holderPid`, provider-postgres): waiting for it to end would wait for nothing,
 * yet its lease is not taken over before it runs out, since a container with the same host name may
 * run that pid.
 */
export function leaseHeldAdvice(
  forkInstead = "onConflict: 'fork'",
  holderRunsHere = false,
  thenResume = '',
  notRunningPid?: number,
): string {
  if (notRunningPid !== undefined)
    return `pid ${notRunningPid} on this machine is not running; its lease runs out then, not sooner (a container with the same host name may run that pid): wait for that${thenResume}, or fork instead (${forkInstead})`;
  const why = holderRunsHere
    ? 'its process is running on this machine'
    : 'a holder that died stops renewing and its lease runs out';
  return `wait for it to end (${why})${thenResume}, or fork instead (${forkInstead})`;
}

/**
 * The message of {@link leaseHeldByOther} with the advice given (the `details` of that error hold
 * its parts, so that a command line or a page can say it in its own words). `lineageNote`, when
 * given, follows the lineage's name: where to find that id (a command line names its listing).
 */
export function leaseHeldMessage(
  lineageId: string,
  holder: string,
  expiresInMs: number,
  advice = leaseHeldAdvice(),
  lineageNote?: string,
): string {
  const left = Math.max(1, Math.round(expiresInMs));
  const named =
    lineageNote === undefined ? lineageName(lineageId) : `${lineageName(lineageId)} ${lineageNote}`;
  return `${named} is being continued by ${holder}, whose lease has ${durationText(left)} left; ${advice}`;
}

/**
 * The refusal of a claim while `holder`'s lease on the lineage has `expiresInMs` left. `holderRunsHere`:
 * the provider saw the holder's process alive on this machine (`details.holderRunsHere`, see
 * `processRunsHere`), so the advice does not suggest that it died.
 */
export function leaseHeldByOther(
  component: string,
  lineageId: string,
  holder: string,
  expiresInMs: number,
  holderRunsHere = false,
): CrewlineError {
  return heldByOther(
    component,
    lineageId,
    holder,
    expiresInMs,
    leaseHeldAdvice(undefined, holderRunsHere),
    true,
    holderRunsHere,
  );
}

/**
 * The refusal of a claim of `checkpointId` (`null`: a new run) when the lineage's newest checkpoint
 * is `headId` (`null`: it has none); `details.headId` tells the runtime where the lineage went.
 */
export function notTheHead(
  component: string,
  lineageId: string,
  checkpointId: string | null,
  headId: string | null,
): CrewlineError {
  const message =
    checkpointId === null
      ? `${lineageName(lineageId)} already has checkpoints (its head is "${headId}"); claim its head to continue it, or start a new run`
      : headId === null
        ? `checkpoint "${checkpointId}" is not the head of ${lineageName(lineageId)}, which has no checkpoint; fork from it instead (onConflict: 'fork')`
        : `checkpoint "${checkpointId}" is no longer the head of ${lineageName(lineageId)} (someone continued it: its head is "${headId}"); fork from it instead (onConflict: 'fork'), or continue the head`;
  return new CrewlineError(component, 'conflict', message, { details: { lineageId, headId } });
}

/** The lease of a lineage as a refused write or renewal of one owner sees it. */
export interface LeaseState {
  /** Someone (this owner or another) has the lease. */
  held: boolean;
  /** The lease is this owner's. */
  mine: boolean;
  holder: string | null;
  /** Milliseconds left (negative: ran out that long ago). */
  expiresInMs: number | null;
}

/**
 * Why an owner does not hold the lease of `lineageId` (any more): the `conflict` its writes and
 * renewals get. `what` says what was refused (`checkpoint "…" was not stored`).
 */
export function leaseLost(
  component: string,
  lineageId: string,
  state: LeaseState,
  what: string,
): CrewlineError {
  const left = state.expiresInMs ?? 0;
  if (state.held && !state.mine && left > 0 && state.holder !== null) {
    return heldByOther(component, lineageId, state.holder, left, `${what}; this run must stop writing`);
  }
  const why = !state.held
    ? 'it was never granted, or was released'
    : state.mine
      ? `it ran out ${durationText(-left)} ago without a renewal`
      : `it was taken over by ${state.holder}, whose lease has run out too`;
  return new CrewlineError(
    component,
    'conflict',
    `this run does not hold the lease on ${lineageName(lineageId)} (${why}); ${what}; stop writing, and claim the head again to continue`,
    { details: { lineageId } },
  );
}

/** The refusal of a checkpoint of one lineage written under the lease of another. */
export function foreignLease(
  component: string,
  checkpointId: string,
  lineageId: string,
  leaseLineageId: string,
): CrewlineError {
  return new CrewlineError(
    component,
    'invalid_argument',
    `checkpoint "${checkpointId}" of ${lineageName(lineageId)} was written under the lease of ${lineageName(leaseLineageId)}; a lease fences its own lineage only`,
  );
}
