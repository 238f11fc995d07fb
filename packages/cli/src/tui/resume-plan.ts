import { type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import { viewDocument } from '../core/document-view.js';
import { newerHeadOf } from '../core/newer-head.js';
import type { ResumePlanViews } from './state/browser-state.js';

/**
 * What the browser's resume plan needs (the `load-plan` effect): the checkpoint, and the latest
 * checkpoint of its run and branch when that is another one, asked of the store as the runtime asks it
 * when it moves a resume to a new branch (not taken from the browser's list, which may be older).
 */
export async function findResumePlan(
  provider: CheckpointProvider,
  location: string,
  checkpointId: string,
): Promise<ResumePlanViews> {
  const view = viewDocument(await readDocument(provider, location, checkpointId));
  const newerHead = await newerHeadOf(provider, location, view.document.metadata);
  return newerHead === undefined ? { view } : { view, newerHead };
}
