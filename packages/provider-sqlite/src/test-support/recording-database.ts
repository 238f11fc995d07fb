import { afterEach } from 'vitest';
import { RecordingProvider } from './recording-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './temporary-database.js';

/**
 * Registers cleanup for the calling test file and returns a function that makes a fresh
 * RecordingProvider over a fresh temporary database (closed and removed after each test).
 */
export function useRecordingDatabases(): () => { provider: RecordingProvider; location: string } {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  return () => {
    const provider = new RecordingProvider();
    const raw = temporaryDatabase();
    cleanups.push(() => {
      provider.close();
      removeTemporaryDatabase(raw);
    });
    return { provider, location: provider.resolveLocation(raw) };
  };
}
