import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['src/test-support/mutants.spec.ts'],
    testTimeout: 30_000,
  },
});
