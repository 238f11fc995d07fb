import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    testTimeout: 30_000,
    // The Postgres server of provider-postgres's own tests (CREWLINE_TEST_POSTGRES_URL, or a
    // throwaway cluster when initdb is installed; without either the Postgres tests are skipped).
    globalSetup: ['./node_modules/@crewline/provider-postgres/src/test-support/global-setup.ts'],
  },
});
