import { constants } from 'node:os';
import { type BaseEvent, logger, SigHupEvent, SigIntEvent, SigTermEvent } from '@crewline/events';
import type { Run } from './run.js';

const component = 'runtime';

type HandledSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

const eventFor: Record<HandledSignal, (signalNumber: number) => BaseEvent> = {
  SIGINT: (signalNumber) => new SigIntEvent({ signal: 'SIGINT', signalNumber, source: systemSource }),
  SIGTERM: (signalNumber) => new SigTermEvent({ signal: 'SIGTERM', signalNumber, source: systemSource }),
  SIGHUP: (signalNumber) => new SigHupEvent({ signal: 'SIGHUP', signalNumber, source: systemSource }),
};

const systemSource = { kind: 'system' as const, id: 'process' };
const handledSignals = Object.keys(eventFor) as HandledSignal[];
const activeRuns = new Set<Run>();
const handlers = new Map<HandledSignal, () => void>();
let handling = false;

/**
 * Delivers process signals to the runs executing now. Our listeners exist only while at least one
 * run is active, so outside runs the process behaves exactly as without crewline.
 */
export function trackRunForSignals(run: Run): () => void {
  activeRuns.add(run);
  if (handlers.size === 0) install();
  return () => {
    activeRuns.delete(run);
    if (activeRuns.size === 0 && !handling) uninstall();
  };
}

function install(): void {
  for (const signal of handledSignals) {
    const handler = () => void onSignal(signal);
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
}

function uninstall(): void {
  for (const [signal, handler] of handlers) process.removeListener(signal, handler);
  handlers.clear();
}

/**
 * Emits the signal event into every active run (which writes a checkpoint when the run's config
 * subscribes to the signal or to '*'), waits for writes in flight, then lets the process end as it
 * would have: when nobody else listens for the signal, our listener is removed and the signal is
 * raised again so Node's default action (exit by that signal) applies.
 */
async function onSignal(signal: HandledSignal): Promise<void> {
  if (handling) {
    // A second Ctrl+C while the first is being handled: stop waiting and end now.
    uninstall();
    process.kill(process.pid, signal);
    return;
  }
  handling = true;
  const signalNumber = constants.signals[signal];
  const runs = [...activeRuns];
  for (const run of runs) {
    try {
      run.emit(systemSource, eventFor[signal](signalNumber));
    } catch (error) {
      logger.warn(component, `could not deliver ${signal} to run ${run.state.runId}`, error);
    }
  }
  await Promise.allSettled(runs.map((run) => run.state.settle()));
  await Promise.allSettled(runs.map((run) => run.bus.flush()));
  handling = false;
  const ours = handlers.get(signal);
  const others = process.listeners(signal).filter((listener) => listener !== ours);
  if (others.length > 0) {
    if (activeRuns.size === 0) uninstall();
    return;
  }
  uninstall();
  process.kill(process.pid, signal);
}
