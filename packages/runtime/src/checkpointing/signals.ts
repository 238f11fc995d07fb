import { constants } from 'node:os';
import {
  type BaseEvent,
  type EventBus,
  logger,
  SigHupEvent,
  SigIntEvent,
  SigTermEvent,
} from '@crewline/events';
import type { ProviderRegistry, RuntimeState } from '@crewline/runtime-state';
import { builtinRegistry, closeBuiltinProvidersAtExit } from './provider-registry.js';

/**
 * What signal delivery needs of a run: a `Run` (described here, so that run.ts and this module do
 * not import each other).
 */
export interface SignalledRun {
  readonly state: Pick<RuntimeState, 'runId' | 'hasPendingWork' | 'settle' | 'writePendingSync' | 'provider'>;
  readonly bus: Pick<EventBus, 'hasPendingHandlers' | 'flush'>;
  readonly holdsLease: boolean;
  /**
   * Where the run's providers come from: closed on the way out of a process a signal or
   * `process.exit()` ends, so that SQLite copies its WAL back into the database file (a copy of the
   * `.db` alone then holds every checkpoint) and Postgres pools are told to end.
   */
  readonly providers: Pick<ProviderRegistry, 'closeNow'>;
  /**
   * The run's body returned or threw: it is writing what it queued and giving its lease up. A signal
   * then records no event in it (its history ended), but still waits for that before the process ends.
   */
  readonly ending: boolean;
  emit(source: unknown, event: BaseEvent): unknown;
  releaseLease(): Promise<void>;
}

const component = 'runtime';

type HandledSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

const eventFor: Record<HandledSignal, (signalNumber: number) => BaseEvent> = {
  SIGINT: (signalNumber) => new SigIntEvent({ signal: 'SIGINT', signalNumber, source: systemSource }),
  SIGTERM: (signalNumber) => new SigTermEvent({ signal: 'SIGTERM', signalNumber, source: systemSource }),
  SIGHUP: (signalNumber) => new SigHupEvent({ signal: 'SIGHUP', signalNumber, source: systemSource }),
};

const systemSource = { kind: 'system' as const, id: 'process' };
const handledSignals = Object.keys(eventFor) as HandledSignal[];
const activeRuns = new Set<SignalledRun>();
const handlers = new Map<HandledSignal, () => void>();
/** Waiting for asynchronous writes after a signal. */
let waiting = false;
/**
 * The process-ending signal a run received whose writes have not all settled yet. The process ends
 * once they have, so a checkpoint that fails meanwhile — one queued before the signal and written
 * after it (background writes keep their order), or one the run queued while the signal waited — is
 * lost with the process, not left behind by a run that goes on (see auto-checkpoint.ts's warning).
 */
const signalOfRun = new WeakMap<object, { readonly signal: HandledSignal }>();

/** True for the signals handled here: the checkpoint of each is the last one of a process that ends. */
export function isProcessEndingSignal(type: string): type is HandledSignal {
  return (handledSignals as readonly string[]).includes(type);
}

/**
 * Marks `run` as ending the process on `signal` until its writes settle: through the signal's event
 * in the run (what auto-checkpoint.ts sees), or here for a run that is ending and records no event.
 */
export function noteProcessEndingSignal(
  run: { readonly state: Pick<RuntimeState, 'settle'> },
  signal: HandledSignal,
): void {
  const mark = { signal };
  signalOfRun.set(run, mark);
  // Settled, the process ends (and nothing is logged any more), or a handler of the program kept it
  // running: the run goes on, and what fails later is left behind by a run that continues. A later
  // signal's mark stays.
  void run.state.settle().then(() => {
    if (signalOfRun.get(run) === mark) signalOfRun.delete(run);
  });
}

/** The process-ending signal `run` received while its writes have not all settled, if any. */
export function processEndingSignalOf(run: object): HandledSignal | undefined {
  return signalOfRun.get(run)?.signal;
}

/*
 * The rule (documented in the README, "Signals"):
 *
 * 1. Our listener is prepended, so it runs before listeners that were there when the run started
 *    (an application handler calling process.exit cannot end the process before the write).
 * 2. It emits the signal event into every active run; a provider that writes synchronously writes
 *    the checkpoint inside that call, one that writes in the background (JSON, SQLite's group
 *    commit) queues it, and rule 4 waits for it.
 * 3. When nothing is left in flight, it steps aside at once, still inside the signal's delivery: the
 *    listeners after it see the process as if crewline had never listened. signal-exit (which Ink
 *    pulls in) ends the process only when it is the only listener, so it does now; an application
 *    handler does what it does; with no other listener the signal is raised again and Node's default
 *    action ends the process. Nobody is called twice.
 * 4. With writes or async handlers in flight, it keeps listening (so signal-exit does not end the
 *    process yet), waits for them, then steps aside. The other listeners were already told about
 *    this signal; the signal is raised again only if nobody is left, or if every listener left is
 *    signal-exit's — those did nothing on the first call by their own rule, and now end the process.
 *    Application handlers are never called twice: they already chose what this signal does.
 * 5. If the process goes on (an application handler chose so), we listen again on the next turn of
 *    the event loop, so later signals reach the runs too.
 */

/**
 * Delivers process signals to the runs executing now. Our listeners exist only while at least one
 * run is active, so outside runs the process behaves exactly as without crewline. A run stays
 * tracked until its end has written what it queued and given its lease up: a signal that comes
 * meanwhile waits for that too (without it, the default action ended the process with the run's last
 * checkpoints still queued and its lineage held until the lease ran out).
 */
export function trackRunForSignals(run: SignalledRun): () => void {
  activeRuns.add(run);
  // A program that calls process.exit() once its run returned ends without closing them either.
  if (run.providers === builtinRegistry) closeBuiltinProvidersAtExit();
  if (handlers.size === 0 && !waiting) install();
  // Prepended: the queued checkpoints are written before any other exit hook runs, the built-in
  // registry's close among them (installed once, by the process's first run, so usually before this
  // one). Closed first, a provider reopened its database to write them and was not closed again: a
  // run's SQLite location other than its main one kept its last checkpoints in its `-wal` file.
  if (activeRuns.size === 1) process.prependListener('exit', writeQueuedOnExit);
  return () => {
    activeRuns.delete(run);
    if (activeRuns.size === 0) process.removeListener('exit', writeQueuedOnExit);
    if (activeRuns.size === 0 && !waiting) uninstall();
  };
}

/**
 * `process.exit()` during a run: no promise settles any more, so the checkpoints still queued for a
 * background write are written now, synchronously and in order, and the runs' providers closed.
 */
function writeQueuedOnExit(): void {
  const runs = [...activeRuns];
  for (const run of runs) {
    try {
      run.state.writePendingSync();
    } catch (error) {
      logger.warn(
        component,
        `could not write the queued checkpoints of run ${run.state.runId} at exit`,
        error,
      );
    }
  }
  closeProviders(runs);
}

/**
 * Closes the providers of `runs` without waiting, each registry once, then each run's own provider
 * (one the program made and passed as `provider`, in no registry): the process ends right after,
 * and neither the signal's default action nor `process.exit()` closes a database handle. SQLite's
 * close copies the WAL back into the database file; left open, every commit since the last copy
 * stayed in the `-wal` file only, and a backup or `scp` of the `.db` alone missed those checkpoints.
 * Closing twice is harmless (a closed provider has nothing left to close).
 */
function closeProviders(runs: readonly SignalledRun[]): void {
  for (const registry of new Set(runs.map((run) => run.providers))) registry.closeNow();
  for (const provider of new Set(runs.map((run) => run.state.provider))) {
    try {
      const closing = provider?.close?.();
      if (closing !== undefined) closing.then(undefined, () => undefined);
    } catch (error) {
      logger.warn(component, 'could not close a checkpoint provider before the process ended', error);
    }
  }
}

/**
 * True when the process ends once this signal's delivery is over: nobody else listens (Node's
 * default action), or only listeners that end it when alone (signal-exit's).
 */
function endsProcess(signal: HandledSignal): boolean {
  const others = process.listenerCount(signal);
  return others === 0 || others === exitWhenAloneListenerCount();
}

function install(): void {
  for (const signal of handledSignals) {
    const handler = () => onSignal(signal);
    handlers.set(signal, handler);
    process.prependListener(signal, handler);
  }
}

function uninstall(): void {
  for (const [signal, handler] of handlers) process.removeListener(signal, handler);
  handlers.clear();
}

function onSignal(signal: HandledSignal): void {
  if (waiting) {
    // A second Ctrl+C while writes are in flight: stop waiting, end as without us.
    waiting = false;
    stepAside(signal, [...activeRuns]);
    return;
  }
  const signalNumber = constants.signals[signal];
  const runs = [...activeRuns];
  for (const run of runs) {
    if (run.ending) {
      // Its history ended, but its queued writes are waited for too: their failures are the process's last.
      noteProcessEndingSignal(run, signal);
      continue;
    }
    try {
      run.emit(systemSource, eventFor[signal](signalNumber));
    } catch (error) {
      logger.warn(component, `could not deliver ${signal} to run ${run.state.runId}`, error);
    }
  }
  // A run holding a lease on its lineage head gives it up before the process ends, so that the
  // next process can continue at once instead of waiting out the lease: that takes a turn.
  if (!runs.some((run) => run.state.hasPendingWork || run.bus.hasPendingHandlers || run.holdsLease)) {
    stepAside(signal, runs);
    return;
  }
  waiting = true;
  void endAfterWrites(signal, runs);
}

/**
 * Stops listening while this signal is still being delivered: the listeners after ours decide, and
 * when there are none the signal is raised again so that Node's default action applies. When the
 * process ends with this signal, the runs' providers are closed first; when an application handler
 * decides, they stay open (a handler that calls `process.exit()` closes them through the exit hook).
 */
function stepAside(signal: HandledSignal, runs: readonly SignalledRun[]): void {
  uninstall();
  if (endsProcess(signal)) closeProviders(runs);
  if (process.listenerCount(signal) === 0) {
    process.kill(process.pid, signal);
    return;
  }
  listenAgainIfAlive();
}

async function endAfterWrites(signal: HandledSignal, runs: SignalledRun[]): Promise<void> {
  await Promise.allSettled(runs.map((run) => run.state.settle()));
  await Promise.allSettled(runs.map((run) => run.bus.flush()));
  if (!waiting) return; // a second signal ended the wait
  waiting = false;
  uninstall();
  if (endsProcess(signal)) {
    // The process ends now; a process that goes on (an application handler's choice) keeps its leases.
    await Promise.allSettled(runs.map((run) => run.releaseLease()));
    closeProviders(runs);
    process.kill(process.pid, signal);
    return;
  }
  listenAgainIfAlive();
}

function listenAgainIfAlive(): void {
  setImmediate(() => {
    if (activeRuns.size > 0 && handlers.size === 0 && !waiting) install();
  });
}

/**
 * How many listeners per signal belong to signal-exit (v4 announces them on a global symbol, v3 on
 * `process.__signal_exit_emitter__`): listeners that end the process only when they are the only
 * listener of the signal.
 */
function exitWhenAloneListenerCount(): number {
  const emitters = [
    (globalThis as Record<symbol, unknown>)[Symbol.for('signal-exit emitter')],
    (process as { __signal_exit_emitter__?: unknown }).__signal_exit_emitter__,
  ];
  let count = 0;
  for (const emitter of emitters) {
    const value = (emitter as { count?: unknown } | undefined)?.count;
    if (typeof value === 'number') count += value;
  }
  return count;
}
