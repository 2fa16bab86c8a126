// PostgreSQL's memory settings for the sandbox's PGlite, passed at every start (`-c`, PGlite's
// `startParams`) rather than written into a data directory: they hold for in-memory sandboxes, for
// data directories on disk (DATA_DIR) and for those older versions created alike, and a data
// directory's own postgresql.conf stays as initdb wrote it.
//
// Why: initdb's default shared_buffers is 128MB, and PGlite (single-user PostgreSQL inside
// WebAssembly) touches all of it at start, so every PGlite sandbox held ~128 MiB of buffers for a
// database of a few MB (bench/RESULTS.md: 505 MiB peak for the server under load, 290 MiB for a
// bare PGlite just opened on a data directory, 180 MiB with 16MB). 16MB still caches the whole
// data set of a sandbox many times over; a data directory on disk that outgrows it reads pages
// through the operating system's file cache, as any PostgreSQL with small shared_buffers does.
// wal_buffers follows shared_buffers (-1: 1/32 of it, 512kB here).
//
// A checkpoint keeps old WAL segments for reuse up to max_wal_size (1GB by default, against the
// sandbox's database of a few MB), and never less than min_wal_size (80MB by default; the snapshot's
// own 5MB): 32MB for both, which holds for the snapshot's 1MB segments and for the 16MB of data
// directories made by initdb (each must be at least two segments). PGlite does not checkpoint by
// itself, whatever these say: pglite-maintenance.ts does.
import { PGlite } from '@electric-sql/pglite';

/** The `-c name=value` pairs the sandbox starts PostgreSQL with, over initdb's postgresql.conf. */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
  min_wal_size: '32MB',
  max_wal_size: '32MB',
};

/** PGlite's own start parameters, then PGLITE_SETTINGS. */
export function pgliteStartParams(): string[] {
  return [...PGlite.defaultStartParams, ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
}
