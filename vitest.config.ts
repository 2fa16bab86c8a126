import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module (`vi.mock`) or a module's export before the app loads it: they need a
 * module graph of their own, so they run isolated (a replacement only takes hold where the module
 * is not loaded and used yet).
 */
const ISOLATED = [
  'test/server/token-throttle.test.ts',
  'test/server/verified-secrets.test.ts',
  'test/server/route-lookup-cache.test.ts',
  'test/server/sandbox-start-failure.test.ts',
];

const shared: { testTimeout: number; hookTimeout: number; pool: 'forks'; setupFiles: string[] } = {
  // A hang guard, not a speed check: scenarios that start several sandboxes or Chromium take ~20 s
  // on a slow hour of this 2-core machine, and passed 30 s when other work shared it (2026-11-24).
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Suites start their own servers (Prism, the reference server) on free loopback ports.
  pool: 'forks',
  // What each file cleans up after itself (the PostgreSQL schemas it made).
  setupFiles: ['test/support/per-file.ts'],
};

export default defineConfig({
  test: {
    // Three files at a time on 2 CPUs (vitest's default is CPUs - 1): suites also wait on servers,
    // sockets, npm, Chromium, locks and timers rather than compute, and with two at a time the CPUs
    // were idle ~17% of the run. Measured with PostgreSQL, alternated (bench/RESULTS.md, "Test suite
    // time"): 2 workers 296 and 303 s, 3 workers 283 and 279 s.
    maxWorkers: 3,
    // Once per run: the initdb cluster in-memory PGlite stores of the suites start from.
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          // A worker process runs file after file without reloading the modules: the PGlite engine
          // compiled, the contract validator built and the sources transformed once per worker, not
          // once per file (bash .ci/run: vitest 5 min 1 s isolated, 3 min 46 s not). Every suite
          // starts its own servers and stores and closes them, so no state crosses files.
          isolate: false,
        },
      },
      { test: { ...shared, name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});
