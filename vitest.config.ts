import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start their own servers (Prism, the reference server) on free loopback ports.
    pool: 'forks',
  },
});
