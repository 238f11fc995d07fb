import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { DocumentView } from '../core/document-view.js';
import type { ResumePlanViews, RunRequest, RunResult } from './state/browser-state.js';

/** What the browser needs from the outside world; the command wires it to a provider and the runtime. */
export interface BrowserHost {
  list(): Promise<StoredCheckpoint[]>;
  readView(checkpointId: string): Promise<DocumentView>;
  /** A checkpoint to resume, and its run's latest when that is another one (see findResumePlan). */
  planResume(checkpointId: string): Promise<ResumePlanViews>;
  /** Runs a resume or fork; `onLine` receives progress lines while it runs. */
  run(request: RunRequest, onLine: (line: string) => void): Promise<RunResult>;
  /** Interrupts a running continuation the way Ctrl+C does outside the browser. */
  interrupt(): void;
}
