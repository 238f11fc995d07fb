import { defineConfig } from 'vitest/config';

// The Postgres server of provider-postgres's own tests (through the workspace devDependency):
// CREWLINE_TEST_POSTGRES_URL, else a throwaway cluster when initdb is installed; without either the
// tests are skipped with one line saying how to enable them (a failure when CI is set).
const postgresSetup = './node_modules/@crewline/provider-postgres/src/test-support/global-setup.ts';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: [postgresSetup, './src/test-support/bundle-worker-child.ts'],
    // The end-to-end file starts several processes; two files at once would starve a two-core machine.
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
