import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    testTimeout: 30_000,
    // Configs loaded by the tests from temporary projects with no node_modules would be cached in the
    // user's cache (~/.cache/crewline), one directory per project, never removed: a user's cache
    // under the temporary directory is not used (tests that look at that cache set their own).
    env: { XDG_CACHE_HOME: join(tmpdir(), 'crewline-tests-user-cache') },
    // The Postgres server of provider-postgres's own tests (CREWLINE_TEST_POSTGRES_URL, or a
    // throwaway cluster when initdb is installed; without either the Postgres tests are skipped).
    globalSetup: ['./node_modules/@crewline/provider-postgres/src/test-support/global-setup.ts'],
  },
});
