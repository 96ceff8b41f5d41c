import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A busy 2-core machine: keep parallelism modest so timing-sensitive tests stay calm.
    maxWorkers: 2,
  },
});
