// Once per `vitest run`, before any suite: two dumped PGlite clusters (gzip tarballs) the suites'
// in-memory stores start from (test/server/support/stores.ts), written side by side:
// - migrated, as the package's own snapshot is (what an in-memory sandbox starts from): the stores
//   of the suites' servers, whose migrations then find nothing to do (~150 ms of CPU each, ~150
//   stores a run);
// - as initdb leaves it (no migration), for the suites of the migrations themselves and of a
//   snapshot older than the migrations.
// initdb inside WebAssembly took ~2-3 s of CPU for every in-memory store the suites opened, loading
// a dump a fraction of it. The paths reach the suites through vitest's provide/inject.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { writePgliteSnapshot } from '../../server/store/pglite-snapshot-writer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The dumped initdb cluster, no migration applied. */
    pgliteClusterSnapshot: string;
    /** The dumped cluster with every migration applied, as the package's snapshot. */
    pgliteMigratedSnapshot: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'pglite-cluster-'));
  const noMigrations = join(dir, 'no-migrations');
  await mkdir(noMigrations);
  const [cluster, migrated] = [join(dir, 'cluster.tar'), join(dir, 'migrated.tar')];
  await Promise.all([writePgliteSnapshot(cluster, noMigrations), writePgliteSnapshot(migrated)]);
  project.provide('pgliteClusterSnapshot', cluster);
  project.provide('pgliteMigratedSnapshot', migrated);
  return () => rm(dir, { recursive: true, force: true });
}
