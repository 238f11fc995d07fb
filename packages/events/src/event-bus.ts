import { AsyncLocalStorage } from 'node:async_hooks';
import type { BaseEvent, EventClass } from './base-event.js';
import { registerCopy } from './duplicate-copies.js';
import { logger } from './logger.js';
import { processSlot } from './process-slot.js';

/**
 * The state of one run as the bus sees it. `@crewline/runtime-state`'s `RuntimeState` implements it
 * and, through {@link RunStateTypes}, is what three-parameter handlers receive.
 */
export interface RunState {
  readonly runId: string;
  /** Appends an emitted event to the run's history and gives it its sequence number. */
  recordEvent(event: BaseEvent): void;
  /** Writes a checkpoint now; throws on failure. */
  checkpoint(location?: string): string;
  /** Writes a checkpoint now; rejects on failure. */
  acheckpoint(location?: string): Promise<string>;
}

/**
 * Augmented by `@crewline/runtime-state` so that handler state is typed as `RuntimeState`:
 * `declare module '@crewline/events' { interface RunStateTypes { state: RuntimeState } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: augmentation point
export interface RunStateTypes {}

export type HandlerState = RunStateTypes extends { state: infer S } ? S : RunState;

/**
 * A handler. Declare two parameters to receive `(source, event)`, three to also receive the run's
 * state; one function type (not a union) so that both forms get their parameter types inferred.
 */
export type EventHandler<E extends BaseEvent> = (
  source: unknown,
  event: E,
  state: HandlerState,
) => void | Promise<void>;

interface Registration {
  handler: (source: unknown, event: BaseEvent, state?: RunState) => unknown;
  wantsState: boolean;
  /** Event types an `onAny` handler is not called for (see {@link AnyHandlerOptions}). */
  except: ReadonlySet<string> | undefined;
}

/** Options of {@link EventBus.onAny}. */
export interface AnyHandlerOptions {
  /**
   * Event types the handler is never called for. Saying so, rather than returning early inside the
   * handler, lets {@link EventBus.wants} answer that nobody listens for them, so emitters can skip
   * building those events. Default: none (the handler receives every event).
   */
  except?: Iterable<string>;
}

/** What {@link EventBus.emit} returns: the run the event belongs to and a promise for async handlers. */
export interface EmitResult {
  state: RunState | undefined;
  /** Settles when every async handler has finished (handlers never reject it). */
  settled: Promise<void>;
}

const component = 'events';

/**
 * A typed event bus with per-run scoping. Handlers are called in registration order; a handler that
 * throws or rejects is logged and never stops emission or the other handlers.
 */
export class EventBus {
  readonly #byType = new Map<string, Set<Registration>>();
  readonly #any = new Set<Registration>();
  readonly #scope = new AsyncLocalStorage<RunState>();
  /** Runs inside {@link runInScope} now, with how many calls each is inside. */
  readonly #active = new Map<RunState, number>();
  readonly #pending = new Set<Promise<void>>();

  /**
   * Calls `handler` for every event of `eventClass`. A handler declared with three parameters also
   * receives the run's state (handlers with three parameters are only called inside a run).
   * Returns a function that unsubscribes.
   */
  on<E extends BaseEvent>(eventClass: EventClass<E>, handler: EventHandler<E>): () => void {
    const registration = toRegistration(handler as Registration['handler']);
    let set = this.#byType.get(eventClass.type);
    if (!set) {
      set = new Set();
      this.#byType.set(eventClass.type, set);
    }
    set.add(registration);
    return () => set.delete(registration);
  }

  /** Like {@link on}, for every event type, but those named in `options.except`. */
  onAny(handler: EventHandler<BaseEvent>, options: AnyHandlerOptions = {}): () => void {
    const registration = toRegistration(handler as Registration['handler'], options.except);
    this.#any.add(registration);
    return () => this.#any.delete(registration);
  }

  /**
   * Whether an event of `type` emitted now would reach at least one handler. Lets an emitter skip
   * building an event only observers read (the checkpoint lifecycle events): an event a run records in
   * its history must be emitted whether or not anyone listens. A copy of this package older than
   * this method shares the bus without it: check `typeof bus.wants === 'function'` first.
   */
  wants(type: string): boolean {
    if ((this.#byType.get(type)?.size ?? 0) > 0) return true;
    for (const registration of this.#any) {
      if (registration.except === undefined || !registration.except.has(type)) return true;
    }
    return false;
  }

  /**
   * The state of the run the caller is executing in, if any: none once that run's
   * {@link runInScope} has settled, even in a timer or promise it started.
   */
  currentState(): RunState | undefined {
    const state = this.#scope.getStore();
    // A timer keeps the async context it was started in after the run is over: what it emits then
    // is not part of that run's history.
    return state !== undefined && this.#active.has(state) ? state : undefined;
  }

  /** Runs that are executing now (used to deliver process signals to every run). */
  activeStates(): RunState[] {
    return [...this.#active.keys()];
  }

  /**
   * Runs `fn` as part of the run owned by `state`: events emitted inside it, however deep in async
   * calls, are recorded in `state` and handed to handlers with it, until `fn` returns or its promise
   * settles; what a timer or promise it left behind emits later belongs to no run. Two runs never see
   * each other.
   */
  runInScope<T>(state: RunState, fn: () => T): T {
    if (this.currentState() === state) return fn();
    this.#enter(state);
    let result: T;
    try {
      result = this.#scope.run(state, fn);
    } catch (error) {
      this.#leave(state);
      throw error;
    }
    if (result instanceof Promise) {
      return result.finally(() => this.#leave(state)) as T;
    }
    this.#leave(state);
    return result;
  }

  #enter(state: RunState): void {
    this.#active.set(state, (this.#active.get(state) ?? 0) + 1);
  }

  #leave(state: RunState): void {
    const count = (this.#active.get(state) ?? 1) - 1;
    if (count > 0) this.#active.set(state, count);
    else this.#active.delete(state);
  }

  /**
   * Emits `event` from `source`: records it in the current run (or `state`, when given) and calls the
   * handlers synchronously. Async handlers keep running; await `settled` or {@link flush} for them.
   */
  emit(source: unknown, event: BaseEvent, state: RunState | undefined = this.currentState()): EmitResult {
    if (state) {
      try {
        state.recordEvent(event);
      } catch (error) {
        logger.warn(component, `could not record event ${event.type} in run ${state.runId}`, error);
      }
    }
    const waits: Promise<void>[] = [];
    const typed = this.#byType.get(event.type);
    const registrations = typed ? [...this.#any, ...typed] : [...this.#any];
    for (const registration of registrations) {
      if (registration.wantsState && !state) continue;
      if (registration.except?.has(event.type)) continue;
      try {
        const returned = registration.wantsState
          ? registration.handler(source, event, state)
          : registration.handler(source, event);
        if (returned instanceof Promise) {
          const tracked = returned.then(
            () => undefined,
            (error: unknown) => logger.warn(component, `async handler for ${event.type} failed`, error),
          );
          waits.push(tracked);
          this.#pending.add(tracked);
          void tracked.finally(() => this.#pending.delete(tracked));
        }
      } catch (error) {
        logger.warn(component, `handler for ${event.type} failed`, error);
      }
    }
    return {
      state,
      settled: waits.length === 0 ? Promise.resolve() : Promise.all(waits).then(() => undefined),
    };
  }

  /** Emits and waits for async handlers (e.g. an `acheckpoint` call) before continuing. */
  async emitAsync(source: unknown, event: BaseEvent, state?: RunState): Promise<RunState | undefined> {
    const result = this.emit(source, event, state ?? this.currentState());
    await result.settled;
    return result.state;
  }

  /** True while an async handler started by an emit has not settled yet (what {@link flush} waits for). */
  get hasPendingHandlers(): boolean {
    return this.#pending.size > 0;
  }

  /** Waits until every async handler started so far has settled. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Removes every handler (for tests). */
  clear(): void {
    this.#byType.clear();
    this.#any.clear();
  }
}

function toRegistration(handler: Registration['handler'], except?: Iterable<string>): Registration {
  const excluded = except === undefined ? undefined : new Set(except);
  return {
    handler,
    wantsState: handler.length >= 3,
    except: excluded === undefined || excluded.size === 0 ? undefined : excluded,
  };
}

// Bump the version in this key when a change to EventBus would break a copy of this package that
// still calls the old methods: copies that disagree then keep separate buses (and say so) rather
// than call methods the other's bus lacks. A method added for new callers (`wants`, `onAny`'s
// options) needs no bump: older copies never call it, and new callers check that it exists.
const busKey = 'crewline.event-bus.v1';

/**
 * The process-wide bus the runtime emits on: one per process, shared by every copy of this package
 * that the process loads. Create your own `new EventBus()` to isolate tests.
 */
export const eventBus: EventBus = processSlot(busKey, () => new EventBus());

// The package directory (this file sits in its dist/ or src/); a bundle may have no file URL.
registerCopy(typeof import.meta.url === 'string' ? new URL('..', import.meta.url) : undefined, busKey);
