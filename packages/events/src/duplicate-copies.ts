import { fileURLToPath } from 'node:url';
import { logger } from './logger.js';
import { processSlot } from './process-slot.js';

/** One loaded copy of this package: where it lives and which shape of event bus it shares. */
interface LoadedCopy {
  location: string;
  busKey: string;
}

/**
 * Every copy of `@crewline/events` loaded in this process. Its shape never changes (unlike the bus,
 * whose key is versioned), so that copies of any version can find each other and say so.
 */
interface LoadedCopies {
  copies: LoadedCopy[];
  warned: boolean;
}

const component = 'events';

/**
 * Records that the copy of this package at `packageUrl` is loaded, sharing the bus under `busKey`. The
 * second copy a process loads logs one warning (one per process, however many copies follow): two
 * copies still share one bus, but they are twice the code and a sign that versions disagree.
 */
export function registerCopy(packageUrl: URL | undefined, busKey: string): void {
  const loaded = processSlot<LoadedCopies>('crewline.events.copies', () => ({ copies: [], warned: false }));
  const location = packageUrl?.protocol === 'file:' ? fileURLToPath(packageUrl) : String(packageUrl);
  // The same files evaluated again (a test runner resetting modules) are not a second copy.
  if (loaded.copies.some((copy) => copy.location === location)) return;
  loaded.copies.push({ location, busKey });
  if (loaded.copies.length < 2 || loaded.warned) return;
  loaded.warned = true;
  logger.warn(component, duplicateCopiesMessage(loaded.copies));
}

export function duplicateCopiesMessage(copies: readonly LoadedCopy[]): string {
  const places = copies.map((copy) => copy.location).join(' and ');
  const shared = copies.every((copy) => copy.busKey === copies[0]!.busKey);
  const consequence = shared
    ? 'they share one event bus, so handlers still receive every event'
    : 'their event buses are incompatible, so handlers registered through one do not receive events emitted through the other';
  return `${copies.length} copies of @crewline/events are installed (${places}); ${consequence}. Install one: give @crewline/events in your package.json a version every crewline package accepts (npm ls @crewline/events shows who asks for which), then run npm dedupe (or pnpm dedupe)`;
}
