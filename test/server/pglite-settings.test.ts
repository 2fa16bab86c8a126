// PostgreSQL's memory settings for the sandbox's PGlite (server/store/pglite-settings.ts): passed
// at every start, so an in-memory sandbox and a data directory on disk run with them, and a data
// directory written as older versions wrote it (initdb's postgresql.conf, shared_buffers = 128MB)
// opens with its data and with them, its postgresql.conf untouched. And the snapshot in-memory
// sandboxes start from is the small one pglite-snapshot-writer.ts makes.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PGLITE_SETTINGS } from '../../server/store/pglite-settings.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';

async function settingsOf(store: { query<T>(sql: string): Promise<{ rows: T[] }> }) {
  const names = Object.keys(PGLITE_SETTINGS);
  const { rows } = await store.query<{ name: string; value: string }>(
    `SELECT name, current_setting(name) AS value FROM unnest(ARRAY[${names.map((n) => `'${n}'`).join(', ')}]) AS name`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

describe("the sandbox's PostgreSQL settings", () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('are small buffers, not initdb’s 128MB, and at most 32MB of WAL kept for reuse at a checkpoint', () => {
    expect(PGLITE_SETTINGS).toEqual({ shared_buffers: '16MB', min_wal_size: '32MB', max_wal_size: '32MB' });
  });

  it('hold for an in-memory store started from a snapshot', async () => {
    // Made by pglite-snapshot-writer.ts, as the package's is (that one exists only after a build).
    const store = await openPgliteWorkerStore(undefined, { snapshot: inject('pgliteClusterSnapshot') });
    try {
      expect(await settingsOf(store)).toEqual(PGLITE_SETTINGS);
      // The snapshot is small (pglite-snapshot-writer.ts): 1 MB WAL segments, no template databases.
      expect((await store.query<{ v: string }>('SELECT current_setting($1) AS v', ['wal_segment_size'])).rows[0]!.v).toBe('1MB');
      expect((await store.query<{ datname: string }>('SELECT datname FROM pg_database')).rows).toEqual([{ datname: 'postgres' }]);
    } finally {
      await store.close();
    }
  });

  it('hold for a data directory an older version created, which still opens with its data', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pglite-settings-'));
    dirs.push(dataDir);
    // As older versions made it: PGlite's own initdb and start parameters.
    const old = await PGlite.create({ dataDir });
    await old.exec("CREATE TABLE kept (label text); INSERT INTO kept VALUES ('from before')");
    expect((await old.query<{ v: string }>('SELECT current_setting($1) AS v', ['shared_buffers'])).rows[0]!.v).toBe('128MB');
    await old.close();
    const conf = await readFile(join(dataDir, 'postgresql.conf'), 'utf8');

    const store = await openPgliteWorkerStore(dataDir);
    try {
      expect((await store.query<{ label: string }>('SELECT label FROM kept')).rows).toEqual([{ label: 'from before' }]);
      expect(await settingsOf(store)).toEqual(PGLITE_SETTINGS);
      expect((await store.query<{ v: string }>('SELECT current_setting($1) AS v', ['wal_segment_size'])).rows[0]!.v).toBe('16MB');
    } finally {
      await store.close();
    }
    expect(await readFile(join(dataDir, 'postgresql.conf'), 'utf8')).toBe(conf);
  }, 60_000);
});
