import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    testTimeout: 30_000,
    // Two test files at a time (vitest's default on two cores is one): the crash trials mostly wait
    // for their child processes, and the CPU-bound files fill that time.
    maxWorkers: 2,
  },
});
