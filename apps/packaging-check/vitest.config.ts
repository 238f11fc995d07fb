import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Packing and npm installs happen once, in the file's beforeAll; the scenarios share them.
    hookTimeout: 300_000,
    testTimeout: 120_000,
  },
});
