// Once per `vitest run`, before any suite: a PGlite cluster as initdb leaves it (no migration),
// dumped to a file the suites' in-memory stores start from (test/server/support/stores.ts). Each
// store then runs the migrations itself, as it did on a cluster of its own: initdb inside
// WebAssembly took ~2-3 s of CPU for every in-memory store the suites opened, loading the dump a
// fraction of it. The path reaches the suites through vitest's provide/inject.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { writePgliteSnapshot } from '../../server/store/pglite-snapshot-writer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The dumped initdb cluster (a gzip tarball) in-memory PGlite stores of the suites start from. */
    pgliteClusterSnapshot: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'pglite-cluster-'));
  const noMigrations = join(dir, 'no-migrations');
  await mkdir(noMigrations);
  const file = join(dir, 'cluster.tar.gz');
  await writePgliteSnapshot(file, noMigrations);
  project.provide('pgliteClusterSnapshot', file);
  return () => rm(dir, { recursive: true, force: true });
}
