// PGlite's thread does what a PostgreSQL server's checkpointer and autovacuum would
// (server/store/pglite-maintenance.ts): without it the WAL of a data directory grew without bound
// and deleted rows kept their space, a `reset()` included. Timings shortened here.
import { readdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import type { MaintenanceChange } from '../../server/store/pglite-maintenance.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';

const FAST = { checkEveryMs: 100, checkpointAfterBytes: 8 * 1024 * 1024, vacuumEveryMs: 600 };
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function walBytes(dataDir: string): Promise<number> {
  const files = await readdir(join(dataDir, 'pg_wal'));
  const sizes = await Promise.all(files.filter((f) => /^[0-9A-F]{24}$/.test(f)).map(async (f) => (await stat(join(dataDir, 'pg_wal', f))).size));
  return sizes.reduce((a, b) => a + b, 0);
}
const MB = 1024 * 1024;

it('keeps the WAL of a data directory bounded while it is written, and gives back the space of deleted rows', async () => {
  const dataDir = join(await mkdtemp(join(tmpdir(), 'maintenance-')), 'data');
  dirs.push(dataDir);
  const store = await openPgliteWorkerStore(dataDir, { snapshot: inject('pgliteClusterSnapshot'), maintenance: FAST });
  try {
    await store.exec('CREATE TABLE filler (id serial PRIMARY KEY, v text)');
    const written = async () => (await store.query<{ at: number }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS at")).rows[0]!.at;
    const from = await written();
    for (let i = 0; i < 40; i++) {
      await store.query("INSERT INTO filler (v) SELECT repeat('x', 200) FROM generate_series(1, 8000)");
      await new Promise((resolve) => setTimeout(resolve, 20)); // room for the thread's passes between statements
    }
    expect((await written()) - from).toBeGreaterThan(80 * MB);
    // Checkpoints ran meanwhile: what is kept is max_wal_size (32MB) and what came after the last one.
    await expect.poll(() => walBytes(dataDir), { timeout: 30_000 }).toBeLessThanOrEqual(48 * MB);
    const size = async () => (await store.query<{ bytes: number }>("SELECT pg_relation_size('filler')::float8 AS bytes")).rows[0]!.bytes;
    expect(await size()).toBeGreaterThan(50 * MB);
    await store.exec('DELETE FROM filler'); // as a reset() does
    await expect.poll(size, { timeout: 30_000, interval: 100 }).toBe(0); // vacuumed: the emptied table truncated
    // The planner's statistics were taken too (ANALYZE).
    expect((await store.query<{ analyzed: boolean }>("SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'filler'")).rows).toEqual([{ analyzed: true }]);
  } finally {
    await store.close();
  }
});

it('keeps at most max_wal_size of WAL for reuse at a checkpoint, however much was written since the last', async () => {
  const dataDir = join(await mkdtemp(join(tmpdir(), 'maintenance-')), 'data');
  dirs.push(dataDir);
  const never = { checkEveryMs: 3_600_000, checkpointAfterBytes: Infinity, vacuumEveryMs: Infinity };
  const store = await openPgliteWorkerStore(dataDir, { snapshot: inject('pgliteClusterSnapshot'), maintenance: never });
  try {
    await store.exec('CREATE TABLE filler (id serial PRIMARY KEY, v text)');
    for (let i = 0; i < 30; i++) await store.query("INSERT INTO filler (v) SELECT repeat('x', 200) FROM generate_series(1, 8000)");
    expect(await walBytes(dataDir)).toBeGreaterThan(64 * MB);
    await store.exec('CHECKPOINT');
    expect(await walBytes(dataDir)).toBeLessThanOrEqual(34 * MB); // 32MB kept, and the segment being written
  } finally {
    await store.close();
  }
});

it('does nothing while the store is idle: no statement writes WAL', async () => {
  const store = await openPgliteWorkerStore(undefined, { snapshot: inject('pgliteClusterSnapshot'), maintenance: FAST });
  try {
    await store.exec('CREATE TABLE t (v int); INSERT INTO t VALUES (1)');
    const position = async () => (await store.query<{ at: string }>('SELECT pg_current_wal_lsn()::text AS at')).rows[0]!.at;
    // Its own checkpoint, then vacuum and checkpoint, after the writes: settled once 1.2 s (two vacuum
    // periods) pass without WAL, which a loaded machine may take a few tries to see.
    let settled = await position();
    const quiet = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const now = await position();
      return now === settled || ((settled = now), false);
    };
    await expect.poll(quiet, { timeout: 20_000, interval: 0 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // fifteen more checks, two vacuum periods
    expect(await position()).toBe(settled);
  } finally {
    await store.close();
  }
});

it('says once that its vacuums fail, naming the statement but not the values, still vacuums the other tables and checkpoints, and says when they work again', async () => {
  const changes: MaintenanceChange[] = [];
  // A checkpoint at every check: the passes between two vacuums checkpoint only, which does not
  // make a refused vacuum work again.
  const timings = { checkEveryMs: 100, checkpointAfterBytes: 0, vacuumEveryMs: 250 };
  const store = await openPgliteWorkerStore(undefined, { snapshot: inject('pgliteClusterSnapshot'), maintenance: timings, onMaintenance: (change) => changes.push(change) });
  try {
    // ANALYZE evaluates an index's expression over the table's rows: this one fails, quoting a
    // value, while the session's test.refuse is on (PGlite is one session, the thread's maintenance included).
    await store.exec(`
      CREATE FUNCTION refused_when_asked(v int) RETURNS bigint IMMUTABLE LANGUAGE plpgsql AS $$
        BEGIN IF current_setting('test.refuse', true) = 'on' THEN RETURN ('card-4111-' || v)::bigint; END IF; RETURN v; END $$;
      CREATE TABLE a_refused (v int);
      CREATE INDEX ON a_refused (refused_when_asked(v));
      INSERT INTO a_refused SELECT generate_series(1, 100);
      CREATE TABLE z_kept (v int);
      INSERT INTO z_kept SELECT generate_series(1, 100);
      SET test.refuse = 'on';
    `);
    const checkpointAt = async () => (await store.query<{ at: string }>('SELECT checkpoint_lsn::text AS at FROM pg_control_checkpoint()')).rows[0]!.at;
    const before = await checkpointAt();
    await expect.poll(() => changes.length, { timeout: 5_000, interval: 50 }).toBe(1);
    expect(changes[0]).toEqual({ failed: true, statement: 'VACUUM (ANALYZE) public.a_refused', error: { message: 'invalid input syntax for type bigint: "[redacted]"', code: '22P02' } });
    // The table after it was vacuumed and analyzed, and the pass made its checkpoint.
    const analyzed = async (table: string) =>
      (await store.query<{ analyzed: boolean }>('SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = $1', [table])).rows[0]!.analyzed;
    expect(await analyzed('z_kept')).toBe(true);
    expect(await analyzed('a_refused')).toBe(false);
    await expect.poll(checkpointAt, { timeout: 2_000, interval: 50 }).not.toBe(before);
    // Writes, so that vacuums run again and fail again: told once, not at every pass.
    for (let i = 0; i < 12; i++) {
      await store.query('INSERT INTO z_kept VALUES ($1)', [i]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(changes).toHaveLength(1);
    await store.exec('RESET test.refuse; INSERT INTO z_kept VALUES (0)');
    await expect.poll(() => changes.length, { timeout: 5_000, interval: 50 }).toBe(2);
    expect(changes[1]).toEqual({ failed: false, failedPasses: expect.any(Number) });
    expect((changes[1] as { failedPasses: number }).failedPasses).toBeGreaterThanOrEqual(2);
    expect(await analyzed('a_refused')).toBe(true);
  } finally {
    await store.close();
  }
});
