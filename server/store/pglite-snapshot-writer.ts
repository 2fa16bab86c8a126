// Writing the snapshot pglite-snapshot.ts reads: a cluster initialised by this PGlite, every
// migration applied, no row. Apart from the reader so that the store (which reads snapshots) and
// the writer (which needs the store to migrate) form no import cycle.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { migrate } from './migrate.ts';
import { engineIdentity, manifestOf, PGLITE_SNAPSHOT_FILE, type Manifest } from './pglite-snapshot.ts';
import { pgliteStartParams } from './pglite-settings.ts';
import { pgliteStore } from './pglite-store.ts';
import { sealedSecrets } from './sealed-secrets.ts';
import { clusterMarkerLast } from './snapshot-tar.ts';

/**
 * Makes a migrated, empty data directory and writes it (a tar) and its manifest to `file`.
 * `migrationsDir` with no migration in it gives a cluster as initdb left it (the test suites' stores
 * start from one, test/support/global-setup.ts, and run the migrations themselves).
 */
export async function writePgliteSnapshot(file = PGLITE_SNAPSHOT_FILE, migrationsDir?: string): Promise<Manifest> {
  // WAL segments of 1 MB, not 16: an in-memory sandbox holds its WAL in memory (Emscripten's MEMFS),
  // and a new segment is written in full (zeros) before use. A new data directory on disk starts
  // from this snapshot too (pglite-worker-store.ts), so it has them as well, and no template0 or
  // template1 (the sandbox never creates a database); one that initdb made keeps initdb's.
  const db = await PGlite.create({ startParams: pgliteStartParams(), initDbStartParams: ['--wal-segsize=1'] });
  const store = pgliteStore(db);
  try {
    // The migrations' code step (009) seals what it finds: nothing here, but it needs a key.
    const atRest = sealedSecrets(randomBytes(32));
    // A new cluster: what migrate applies is every migration of the directory, in order.
    const migrations = await migrate({ ...store, atRest, transaction: (fn) => store.transaction((tx) => fn({ ...tx, atRest })) }, migrationsDir);
    // The sandbox uses one database, `postgres`, and never creates another: the two templates were
    // ~14 of the 41 MB every in-memory start untarred into memory (with the 16 MB WAL segment, 26).
    await store.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
    for (const template of ['template0', 'template1']) await store.exec(`DROP DATABASE ${template}`);
    await store.exec('CHECKPOINT'); // the dump starts with no WAL to replay
    // Of the WAL, the segments from the checkpoint's redo point to the current one: the others are
    // old segments kept for reuse (min_wal_size), 4 of the 5 MB every start untarred into memory.
    const { rows: [wal] } = await store.query<{ redo: string; current: string }>(
      'SELECT pg_walfile_name(redo_lsn) AS redo, pg_walfile_name(pg_current_wal_lsn()) AS current FROM pg_control_checkpoint()',
    );
    // Segment names of one timeline sort in WAL order.
    const needed = (segment: string) => segment >= wal!.redo && segment <= wal!.current;
    // PG_VERSION last (snapshot-tar.ts): a first start on disk killed midway leaves no half cluster.
    const dump = new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer());
    // Not compressed (pglite-snapshot.ts says why).
    await writeFile(file, clusterMarkerLast(dump, needed));
    const manifest: Manifest = { engine: engineIdentity(), migrations };
    await writeFile(manifestOf(file), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  } finally {
    await store.close();
  }
}
