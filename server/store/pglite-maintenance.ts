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

/**
 * Told once when a pass fails after passes that worked (its statement, and PostgreSQL's message and
 * code), and once when what failed works again, after `failedPasses` that failed. A checkpoint that
 * failed is tried again at the next check, a table's vacuum at the next vacuum; meanwhile the WAL
 * and the tables grow.
 */
export type MaintenanceChange =
  | { failed: true; statement: string; error: { message: string; code?: string } }
  | { failed: false; failedPasses: number };

/** Starts the passes; the returned function stops them (a pass running finishes on its own). */
export function startMaintenance(db: PGlite, timings: MaintenanceTimings = MAINTENANCE, onChange?: (change: MaintenanceChange) => void): () => void {
  let statement = ''; // the one running, named when it fails
  const query = <T>(sql: string) => {
    statement = sql;
    return db.query<T>(sql);
  };
  const exec = (sql: string) => {
    statement = sql;
    return db.exec(sql);
  };
  const position = async () => (await query<{ at: number }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS at")).rows[0]!.at;
  // Everything written since the cluster began counts at the first pass: a checkpoint then, once
  // past checkpointAfterBytes, and a vacuum vacuumEveryMs after the start.
  let checkpointedAt = 0;
  let vacuumedAt = 0;
  let lastVacuum = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  /** Set by a pass that failed on a table's vacuum (tried again only at the next vacuum). */
  let refusedVacuum = false;

  /** What the pass did to its end: only a pass that did again what failed says that it works again. */
  async function pass(): Promise<'vacuum' | 'checkpoint' | 'nothing'> {
    refusedVacuum = false;
    const now = await position();
    const vacuum = now !== vacuumedAt && Date.now() - lastVacuum >= timings.vacuumEveryMs;
    let refused: { error: unknown; statement: string } | undefined;
    if (vacuum) {
      const { rows } = await query<{ name: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'm') AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1`,
      );
      for (const { name } of rows) {
        if (stopped) return 'nothing'; // a closing store waits for one table at most
        // A table refused (an index expression that raises, say) leaves the others vacuumed and the
        // checkpoint made; the pass then fails with it.
        await exec(`VACUUM (ANALYZE) ${name}`).catch((error: unknown) => void (refused ??= { error, statement }));
      }
      lastVacuum = Date.now();
    }
    const checkpoint = vacuum || (await position()) - checkpointedAt >= timings.checkpointAfterBytes;
    if (checkpoint) {
      await exec('CHECKPOINT');
      checkpointedAt = await position(); // past the checkpoint's own record: an idle store stays idle
      if (vacuum) vacuumedAt = checkpointedAt;
    }
    if (refused) {
      statement = refused.statement;
      refusedVacuum = true;
      throw refused.error;
    }
    return vacuum ? 'vacuum' : checkpoint ? 'checkpoint' : 'nothing';
  }

  let failedPasses = 0;
  /** What the failed passes could not do: a table's vacuum, or any statement (the WAL's position, a checkpoint). */
  let failing: 'vacuum' | 'any' = 'any';
  const tell = (change: MaintenanceChange) => {
    try {
      onChange?.(change);
    } catch {
      // the listener's own failure: the passes go on
    }
  };
  // A vacuum refused works again with a vacuum of every table; anything else, with a checkpoint (a
  // pass that only read the WAL's position did not try again what failed).
  const worked = (done: 'vacuum' | 'checkpoint' | 'nothing') => {
    if (failedPasses === 0 || done === 'nothing' || (failing === 'vacuum' && done !== 'vacuum')) return;
    if (!stopped) tell({ failed: false, failedPasses });
    failedPasses = 0;
    failing = 'any';
  };
  // Tried again at the next check (a statement refused, a disk full), a table's vacuum at the next
  // vacuum; told once until it works again; a store closing says nothing.
  const failed = (error: unknown) => {
    if (stopped) return;
    if (refusedVacuum) failing = 'vacuum';
    failedPasses += 1;
    if (failedPasses > 1) return;
    const { message, code } = error instanceof Error ? (error as Error & { code?: unknown }) : { message: String(error), code: undefined };
    tell({ failed: true, statement: statement.replace(/\s+/g, ' '), error: typeof code === 'string' ? { message, code } : { message } });
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      pass().then(worked, failed).finally(schedule);
    }, timings.checkEveryMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
