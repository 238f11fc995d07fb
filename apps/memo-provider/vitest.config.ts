import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@crewline/source'] },
  ssr: { resolve: { conditions: ['@crewline/source'] } },
  test: { include: ['src/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
