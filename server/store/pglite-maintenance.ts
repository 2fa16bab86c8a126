// What a PostgreSQL server's background processes do, done for PGlite on its own thread. PGlite is
// PostgreSQL in single-user mode: no checkpointer and no autovacuum run beside it, and a standalone
// backend never checkpoints on its own. Without them the WAL grows without bound (only a checkpoint
// lets PostgreSQL remove or recycle old segments; max_wal_size in pglite-settings.ts caps what it
// keeps), and the space of deleted and updated rows is never reused nor given back. A soak review
// (15 minutes at ~30 requests per second on a data directory): 64 MB of WAL, one 41 MB table for
// 4,710 rows (10 MB once vacuumed), and a `reset()` that gave back nothing.
//
// Every `checkEveryMs` the thread reads the WAL position (no write): when it moved since the last
// vacuum and that was `vacuumEveryMs` ago, `VACUUM (ANALYZE)` of each table (which also truncates
// the tables a reset emptied, and refreshes the planner's statistics), then a checkpoint; otherwise a
// checkpoint once `checkpointAfterBytes` of WAL were written since the last. The statements go
// through PGlite's own queue, so they run between transactions, never inside one, and the requests
// waiting run between two tables' vacuums (one for the whole database held a 194 MB one's requests
// for 2.6 s, an outside review). PGlite keeps no per-table activity counts (pg_stat_user_tables
// stays at zero: its loop never reports them), so every table of the database's schemas is
// vacuumed, not only the changed ones. The first pass counts everything written since the cluster
// began; an idle store then does nothing.
import type { PGlite } from '@electric-sql/pglite';

export interface MaintenanceTimings {
  checkEveryMs: number;
  checkpointAfterBytes: number;
  vacuumEveryMs: number;
}

export const MAINTENANCE: MaintenanceTimings = { checkEveryMs: 30_000, checkpointAfterBytes: 16 * 1024 * 1024, vacuumEveryMs: 5 * 60_000 };

/** Starts the passes; the returned function stops them (a pass running finishes on its own). */
export function startMaintenance(db: PGlite, timings: MaintenanceTimings = MAINTENANCE): () => void {
  const position = async () => (await db.query<{ at: number }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS at")).rows[0]!.at;
  // Everything written since the cluster began counts at the first pass: a checkpoint then, once
  // past checkpointAfterBytes, and a vacuum vacuumEveryMs after the start.
  let checkpointedAt = 0;
  let vacuumedAt = 0;
  let lastVacuum = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function pass(): Promise<void> {
    const now = await position();
    const vacuum = now !== vacuumedAt && Date.now() - lastVacuum >= timings.vacuumEveryMs;
    if (vacuum) {
      const { rows } = await db.query<{ name: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'm') AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1`,
      );
      for (const { name } of rows) {
        if (stopped) return; // a closing store waits for one table at most
        await db.exec(`VACUUM (ANALYZE) ${name}`);
      }
      lastVacuum = Date.now();
    }
    if (vacuum || (await position()) - checkpointedAt >= timings.checkpointAfterBytes) {
      await db.exec('CHECKPOINT');
      checkpointedAt = await position(); // past the checkpoint's own record: an idle store stays idle
      if (vacuum) vacuumedAt = checkpointedAt;
    }
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      pass()
        .catch(() => {}) // tried again at the next pass (a store closing, a statement refused)
        .finally(schedule);
    }, timings.checkEveryMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
