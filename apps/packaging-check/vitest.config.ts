import { defineConfig } from 'vitest/config';

// The Postgres server of the worker scenario is the one provider-postgres's own tests use: its global
// setup (through the workspace devDependency) takes CREWLINE_TEST_POSTGRES_URL or starts a throwaway
// cluster, removed at the end; without either the scenario is skipped (a failure when CI is set).
const postgresSetup = './node_modules/@crewline/provider-postgres/src/test-support/global-setup.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: [postgresSetup],
    // Packing and npm installs happen once, in the file's beforeAll; the scenarios share them.
    hookTimeout: 300_000,
    testTimeout: 120_000,
  },
});
