import { readDocument } from '@crewline/runtime-state';
import type { InMemoryProvider } from '@crewline/runtime-state/testing';
import { viewDocument } from '../core/document-view.js';
import type { BrowserHost } from '../tui/browser-host.js';
import { findResumePlan } from '../tui/resume-plan.js';
import type { RunRequest, RunResult } from '../tui/state/browser-state.js';

/** A browser host over an in-memory provider whose runs are scripted: it records each request. */
export class MemoryHost implements BrowserHost {
  readonly requests: RunRequest[] = [];
  interrupted = 0;
  #finish: ((result: RunResult) => void) | undefined;
  #onLine: ((line: string) => void) | undefined;

  constructor(
    readonly provider: InMemoryProvider,
    readonly location: string,
  ) {}

  list() {
    return this.provider.list(this.location);
  }

  async readView(checkpointId: string) {
    return viewDocument(await readDocument(this.provider, this.location, checkpointId));
  }

  planResume(checkpointId: string) {
    return findResumePlan(this.provider, this.location, checkpointId);
  }

  run(request: RunRequest, onLine: (line: string) => void): Promise<RunResult> {
    this.requests.push(request);
    this.#onLine = onLine;
    return new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  /** Sends a progress line to the running run. */
  progress(line: string): void {
    this.#onLine?.(line);
  }

  /** Ends the running run with `result`. */
  finish(result: RunResult): void {
    this.#finish?.(result);
  }

  interrupt(): void {
    this.interrupted += 1;
  }
}

/** Waits until `probe` returns true, checking every 10 ms, up to `timeoutMs`. */
export async function waitFor(probe: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
