import { existsSync } from 'node:fs';
import type { CheckpointProvider } from '@crewline/runtime-state';

/**
 * True for a reference to a location rather than to one of its checkpoints: no `#id`, no bare id
 * looked up in `defaultLocation`, and nothing `provider` reads as naming a checkpoint (a JSON file).
 * The same forms `resolveReference` turns into the location's latest. A checkpoint read through such
 * a reference was the latest of its run when it was read, by the reading itself: no later query of
 * the store can tell otherwise (another process's continuation landing after the read would make it
 * say "not the latest", and the resume would pay again for what that process ran). One rule for the
 * runtime's restores and the CLI's commands, which read the checkpoint before the runtime does.
 */
export function asksForLatest(
  reference: string,
  provider: Pick<CheckpointProvider, 'parseReference'>,
  defaultLocation?: string,
): boolean {
  if (reference.includes('#')) return false;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(reference);
  if (!isUrl && defaultLocation !== undefined && !reference.includes('/') && !existsSync(reference))
    return false;
  const parsed = provider.parseReference(reference);
  return parsed !== undefined && (parsed.id === undefined || parsed.id === '');
}
