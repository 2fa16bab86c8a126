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

/** Makes a migrated, empty data directory and writes it (gzip tarball) and its manifest to `file`. */
export async function writePgliteSnapshot(file = PGLITE_SNAPSHOT_FILE, migrationsDir?: string): Promise<Manifest> {
  const db = await PGlite.create({ startParams: pgliteStartParams() });
  const store = pgliteStore(db);
  try {
    // The migrations' code step (009) seals what it finds: nothing here, but it needs a key.
    const atRest = sealedSecrets(randomBytes(32));
    await migrate({ ...store, atRest, transaction: (fn) => store.transaction((tx) => fn({ ...tx, atRest })) }, migrationsDir);
    const { rows } = await store.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    await store.exec('CHECKPOINT'); // the dump starts with no WAL to replay
    await writeFile(file, new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer()));
    const manifest: Manifest = { engine: engineIdentity(), migrations: rows.map((r) => r.version) };
    await writeFile(manifestOf(file), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  } finally {
    await store.close();
  }
}
