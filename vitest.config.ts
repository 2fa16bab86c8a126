import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start their own servers (Prism, the reference server) on free loopback ports.
    pool: 'forks',
    // Two files at a time even on 2 CPUs (vitest's default is CPUs - 1): most suites wait on servers,
    // sockets, npm and Chromium rather than compute, so the suite takes about half the time.
    maxWorkers: 2,
  },
});
