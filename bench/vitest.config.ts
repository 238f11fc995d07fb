import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    // Whole runs in child processes on a shared 2-core machine: generous, the suites take about a
    // minute together.
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
