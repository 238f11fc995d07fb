import { afterEach, beforeEach } from 'vitest';
import { temporaryDirectory } from './fixtures.js';

/**
 * A fresh temporary directory for each test of the calling file, removed after the test:
 * `const directory = useTemporaryDirectory();` at the top level, then `directory.path` in a test.
 */
export function useTemporaryDirectory(prefix?: string): { readonly path: string } {
  let current: { path: string; cleanup: () => void } | undefined;
  beforeEach(() => {
    current = temporaryDirectory(prefix);
  });
  afterEach(() => current?.cleanup());
  return {
    get path() {
      if (current === undefined)
        throw new Error('useTemporaryDirectory: directory.path is read outside a test');
      return current.path;
    },
  };
}
