import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One worker per core. Vitest's default leaves a core free (availableParallelism - 1), which on
    // a 2-core CI machine ran every file one after another; most files wait on child processes and
    // peers (nsd, PostgreSQL, chromium), so two workers finish the suite in about two thirds of the time.
    maxWorkers: '100%',
    // With the cores shared by two workers and their children, a test that spawns several CLI runs
    // takes up to twice as long as alone; these bounds are for a hung test, not a slow one.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
