import { AsyncLocalStorage } from 'node:async_hooks';
import type { Activation, PauseRequest } from './run-progress.js';

/** The flow method executing in the current async context. */
export interface MethodScope {
  /** The flow instance (compared by identity). */
  flow: object;
  activation: Activation;
  /** `ask()` calls made so far in this execution. */
  asked: number;
  /** Set when the method asked for input that has not been given: the execution pauses. */
  pauseRequested: PauseRequest | undefined;
}

export const methodScope = new AsyncLocalStorage<MethodScope>();

/**
 * Unwinds a method that asked for input nobody has given yet. It is not an Error on purpose: it is
 * control flow, and code that catches errors to log them should not treat a pause as one.
 */
export class FlowPauseSignal {
  readonly request: PauseRequest;

  constructor(request: PauseRequest) {
    this.request = request;
  }
}
