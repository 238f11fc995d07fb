import { defineConfig } from 'vitest/config';

// The tutorial end to end: real child processes, a real SIGINT, the real CLI. One file per storage
// provider; they run one after the other so that the timing of the interrupt does not depend on
// how busy a 2-core machine is with the other file.
export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: {
    include: ['e2e/**/*.e2e.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
