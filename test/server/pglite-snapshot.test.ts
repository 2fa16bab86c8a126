// In-memory PGlite starts from the build's pre-initialized, migrated data directory
// (server/store/pglite-snapshot.ts), still migrates what the snapshot lacks, ignores a snapshot of
// another PGlite build; reset() clears every object in one cheap script and keeps the demo seller.
import { startPlatformServer } from './support/server.ts';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../server/store/migrate.ts';
import { manifestOf, pgliteSnapshot } from '../../server/store/pglite-snapshot.ts';
import { writePgliteSnapshot } from '../../server/store/pglite-snapshot-writer.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { isClusterMarker, tarEntries } from '../../server/store/snapshot-tar.ts';
import { sealedSecrets } from '../../server/store/sealed-secrets.ts';
import type { Store } from '../../server/store/store.ts';
import { prepareReset, resetSandbox } from '../../server/sandbox/reset.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { createLink, createSeller } from './support/payment-link.ts';

const MIGRATIONS = join(import.meta.dirname, '../../server/store/migrations');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const withKey = (store: Store): Store => {
  const atRest = sealedSecrets(randomBytes(32));
  return { ...store, atRest, transaction: (fn) => store.transaction((tx) => fn({ ...tx, atRest })) };
};
const versions = async (store: Store) => (await store.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);

describe('the pre-initialized data directory', () => {
  it('is loaded in memory, and the migrations it is older than still run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const older = join(dir, 'migrations');
    await (await import('node:fs/promises')).mkdir(older);
    const all = (await readdir(MIGRATIONS)).filter((f) => f.endsWith('.sql')).sort();
    for (const file of all.slice(0, 3)) await copyFile(join(MIGRATIONS, file), join(older, file));
    const file = join(dir, 'snapshot.tar');
    const manifest = await writePgliteSnapshot(file, older);
    expect(manifest.migrations).toEqual(all.slice(0, 3).map((f) => f.slice(0, 3)));

    const store = withKey(await openPgliteWorkerStore(undefined, { snapshot: file }));
    try {
      expect(await versions(store)).toEqual(manifest.migrations); // from the snapshot: initdb has no such table
      const applied = await migrate(store);
      expect(applied).toEqual(all.slice(3).map((f) => f.slice(0, 3)));
      expect(await versions(store)).toEqual(all.map((f) => f.slice(0, 3)));
    } finally {
      await store.close();
    }
  });

  it('is written into a data directory with no cluster yet (no initdb), which then keeps its data; an existing cluster is opened as it is', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const snapshot = inject('pgliteClusterSnapshot'); // written with 1 MB WAL segments; initdb's are 16 MB
    const walSegments = async (store: Store) => (await store.query<{ size: string }>("SELECT current_setting('wal_segment_size') AS size")).rows[0]!.size;
    const emptyDir = join(dir, 'empty');
    await (await import('node:fs/promises')).mkdir(emptyDir);
    for (const dataDir of [join(dir, 'absent'), emptyDir]) {
      const store = await openPgliteWorkerStore(dataDir, { snapshot });
      try {
        expect(await walSegments(store)).toBe('1MB');
        await store.exec('CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$written$$)');
      } finally {
        await store.close();
      }
      expect(await readdir(dataDir)).toContain('PG_VERSION');
      // Reopened: the cluster on disk as it was left, not the snapshot again.
      const again = await openPgliteWorkerStore(dataDir, { snapshot });
      try {
        expect((await again.query<{ v: string }>('SELECT v FROM kept')).rows).toEqual([{ v: 'written' }]);
      } finally {
        await again.close();
      }
    }
    // Without a snapshot, a new data directory is made by initdb, as before.
    const initdb = await openPgliteWorkerStore(join(dir, 'initdb'), {});
    try {
      expect(await walSegments(initdb)).toBe('16MB');
    } finally {
      await initdb.close();
    }
  });

  it('holds one WAL segment, its checkpoint\'s, not the ones kept for reuse; a sandbox from it writes past it and reopens', async () => {
    const snapshot = inject('pgliteClusterSnapshot'); // by the package's writer
    const segments = tarEntries(await readFile(snapshot)).filter((e) => /^\/?pg_wal\/[0-9A-F]{24}$/.test(e.path));
    expect(segments.map((e) => e.data.length)).toEqual([1024 * 1024]);
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const dataDir = join(dir, 'wal');
    const store = await openPgliteWorkerStore(dataDir, { snapshot });
    try {
      const checkpoint = (await store.query<{ redo: string }>('SELECT pg_walfile_name(redo_lsn) AS redo FROM pg_control_checkpoint()')).rows[0]!.redo;
      expect(segments[0]!.path).toMatch(new RegExp(`${checkpoint}$`));
      // ~4 MB of rows: the WAL goes on into segments the snapshot does not have.
      await store.exec("CREATE TABLE big (v text); INSERT INTO big SELECT repeat('x', 1000) FROM generate_series(1, 4000); CHECKPOINT");
      const now = (await store.query<{ current: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS current FROM pg_control_checkpoint()')).rows[0]!.current;
      expect(now > checkpoint).toBe(true);
    } finally {
      await store.close();
    }
    const again = await openPgliteWorkerStore(dataDir, { snapshot });
    try {
      expect((await again.query<{ n: number }>('SELECT count(*)::int AS n FROM big')).rows).toEqual([{ n: 4000 }]);
    } finally {
      await again.close();
    }
  });

  it("ends with the cluster's PG_VERSION: a first start on disk cut short leaves no half cluster, and the next start writes it again", async () => {
    const snapshot = inject('pgliteClusterSnapshot'); // by the package's writer
    const entries = tarEntries(await readFile(snapshot));
    expect(entries.filter(isClusterMarker)).toHaveLength(1);
    expect(isClusterMarker(entries.at(-1)!)).toBe(true);
    expect(entries.length).toBeGreaterThan(100);
    // A start killed just before the last entry: every file but PG_VERSION written.
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const dataDir = join(dir, 'cut-short');
    for (const entry of entries.slice(0, -1)) {
      const path = join(dataDir, entry.path);
      if (entry.type === '5') await mkdir(path, { recursive: true });
      else {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, entry.data);
      }
    }
    const store = await openPgliteWorkerStore(dataDir, { snapshot });
    try {
      expect((await store.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'pg_class'")).rows).toEqual([{ n: 1 }]);
    } finally {
      await store.close();
    }
    expect(await readdir(dataDir)).toContain('PG_VERSION');
  });

  it('is not used when another PGlite build wrote it, nor when it is missing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const file = join(dir, 'other.tar');
    await writeFile(file, Buffer.alloc(16));
    await writeFile(join(dir, 'other.json'), JSON.stringify({ engine: '1-2', migrations: [] }));
    expect(pgliteSnapshot(file)).toBeUndefined();
    expect(pgliteSnapshot(join(dir, 'absent.tar'))).toBeUndefined();
  });

  it('is looked for again at the next start when it was missing (a build may write it meanwhile)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const file = join(dir, 'later.tar');
    expect(pgliteSnapshot(file)).toBeUndefined();
    const made = inject('pgliteClusterSnapshot'); // by the same writer, as a build would
    await Promise.all([copyFile(made, file), copyFile(manifestOf(made), manifestOf(file))]);
    const found = pgliteSnapshot(file);
    expect(found).toBeInstanceOf(SharedArrayBuffer); // shared with every PGlite thread of the process
    expect(Buffer.from(found!, 257, 5).toString('latin1')).toBe('ustar'); // an uncompressed tar
    expect(pgliteSnapshot(file)).toBe(found); // and read once from then on
  });

  it('is not kept when cut short (a build rewriting it, a full disk), and is read again once whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-snapshot-'));
    dirs.push(dir);
    const file = join(dir, 'cut.tar');
    const made = inject('pgliteClusterSnapshot');
    const whole = await readFile(made);
    await copyFile(manifestOf(made), manifestOf(file));
    // Empty, cut inside an entry, cut on an entry's boundary before PG_VERSION, and whole but for its end blocks.
    const lastEntry = tarEntries(whole).at(-1)!;
    const beforeMarker = lastEntry.bytes.byteOffset - whole.byteOffset;
    for (const length of [0, 4_000_000, beforeMarker, whole.length - 1024]) {
      await writeFile(file, whole.subarray(0, length));
      expect(pgliteSnapshot(file), `cut at ${length}`).toBeUndefined();
    }
    await writeFile(file, whole);
    expect(Buffer.from(pgliteSnapshot(file)!).equals(whole)).toBe(true);
  });
});

describe('reset', () => {
  it('reads its script once, ahead of the first reset when prepared (a startSandbox does it at start), and again after a failed read', async () => {
    const server = await startPlatformServer('pglite');
    try {
      let catalogReads = 0;
      let failNext = false;
      const store: Store = {
        ...server.store,
        query: async (sql, params) => {
          if (/FROM pg_tables/.test(sql)) {
            catalogReads += 1;
            if (failNext) {
              failNext = false;
              throw new Error('the catalog could not be read');
            }
          }
          return server.store.query(sql, params);
        },
      };
      prepareReset(store);
      await expect.poll(() => catalogReads).toBe(1);
      await createLink(server, DEMO_SELLER_ID);
      await resetSandbox(store);
      await resetSandbox(store);
      expect(catalogReads).toBe(1); // neither reset read it again
      expect((await server.store.query('SELECT 1 FROM payment_links')).rowCount).toBe(0);

      const other: Store = { ...store };
      failNext = true;
      prepareReset(other); // its read fails: nothing is thrown here, and the first reset reads it again
      await expect.poll(() => catalogReads).toBe(2);
      await createLink(server, DEMO_SELLER_ID);
      await resetSandbox(other);
      expect(catalogReads).toBe(3);
      expect((await server.store.query('SELECT 1 FROM payment_links')).rowCount).toBe(0);

      // A reset that joins the read begun at start, which then fails, reads it again rather than fail.
      const joined: Store = { ...store };
      await createLink(server, DEMO_SELLER_ID);
      failNext = true;
      prepareReset(joined);
      await resetSandbox(joined); // at once: the read begun above is still running
      expect(catalogReads).toBe(5);
      expect((await server.store.query('SELECT 1 FROM payment_links')).rowCount).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('clears every object of every seller, keeps the demo seller and the signing keys, and restarts sequences', async () => {
    const server = await startPlatformServer('pglite');
    try {
      const count = async (table: string) => Number((await server.store.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`)).rows[0]!.n);
      const seller = await createSeller(server);
      await createLink(server, seller.sellerId);
      await createLink(server, DEMO_SELLER_ID);
      const keys = await count('signing_keys');
      expect(await count('payment_links')).toBe(2);
      expect(await count('sellers')).toBe(2);

      await resetSandbox(server.store);
      expect(await count('payment_links')).toBe(0);
      expect((await server.store.query('SELECT seller_id FROM sellers')).rows).toEqual([{ seller_id: DEMO_SELLER_ID }]);
      expect(await count('api_clients')).toBe(1);
      expect(await count('signing_keys')).toBe(keys);
      // The demo seller still gets tokens and makes links after a reset (twice: the script is cached).
      await createLink(server, DEMO_SELLER_ID);
      await resetSandbox(server.store);
      expect(await count('payment_links')).toBe(0);
      const { rows } = await server.store.query<{ last: string | null }>(
        "SELECT last_value AS last FROM pg_sequences WHERE schemaname = current_schema() AND last_value IS NOT NULL",
      );
      expect(rows).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
