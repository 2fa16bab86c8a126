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
import { PGlite } from '@electric-sql/pglite';

/** The `-c name=value` pairs the sandbox starts PostgreSQL with, over initdb's postgresql.conf. */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
};

/** PGlite's own start parameters, then PGLITE_SETTINGS. */
export function pgliteStartParams(): string[] {
  return [...PGlite.defaultStartParams, ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
}
