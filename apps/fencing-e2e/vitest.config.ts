import { defineConfig } from 'vitest/config';

// The Postgres server is the one provider-postgres's own tests use: its globalSetup (through the
// workspace dependency) takes CREWLINE_TEST_POSTGRES_URL or starts a throwaway cluster, and without
// either skips those tests with one line (fails under CI).
const postgresSetup = './node_modules/@crewline/provider-postgres/src/test-support/global-setup.ts';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: [postgresSetup, './src/support/bundle-child.ts'],
    // Each file starts several processes at once; two files at a time would starve a two-core machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
