// A PGlite data directory is the sandbox's database: only its owner may reach it. PGlite writes the
// cluster's files readable and writable by everyone (mode 666, whatever the umask), so the
// directory is what keeps other local users out, as PostgreSQL requires of its own data directories
// (it refuses to start on one that group or others can reach). A directory the sandbox creates is
// created with mode 700; an existing one that group or others can reach (a directory made with
// `mkdir`, or by an earlier version of the sandbox, 755 under the usual umask) is set to 700 at
// opening, and the caller is told so. A directory that holds other things and no cluster is
// refused, untouched (CLUSTER_ENTRIES). Synchronous: a few system calls, before PGlite's thread starts.
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';

const PRIVATE = 0o700;

/**
 * What a PostgreSQL data directory holds at its top (PostgreSQL's layout; postmaster.* while a
 * server runs). A directory with other entries and no PG_VERSION is not one: the user's home, the
 * current directory, /tmp given by mistake. The sandbox neither writes its cluster into it nor
 * changes its mode, as initdb refuses a directory that is not empty. A first start cut short
 * (the snapshot's PG_VERSION comes last) leaves only these names, and starts again.
 */
const CLUSTER_ENTRIES = new Set([
  'PG_VERSION', 'base', 'global', 'pg_commit_ts', 'pg_dynshmem', 'pg_hba.conf', 'pg_ident.conf', 'pg_logical', 'pg_multixact',
  'pg_notify', 'pg_replslot', 'pg_serial', 'pg_snapshots', 'pg_stat', 'pg_stat_tmp', 'pg_subtrans', 'pg_tblspc', 'pg_twophase',
  'pg_wal', 'pg_xact', 'postgresql.auto.conf', 'postgresql.conf', 'postmaster.opts', 'postmaster.pid',
]);

/** What was done to an existing directory: its mode before, when it was changed. */
export interface MadePrivate {
  dataDir: string;
  previousMode: string;
}

/** Creates the directory (mode 700) or makes an existing one private; answers what it changed. */
export function privateDataDirectory(dataDir: string): MadePrivate | undefined {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE });
  const entries = readdirSync(dataDir);
  const foreign = entries.filter((entry) => !CLUSTER_ENTRIES.has(entry));
  if (foreign.length && !entries.includes('PG_VERSION')) {
    const shown = foreign.slice(0, 3).map((entry) => JSON.stringify(entry)).join(', ') + (foreign.length > 3 ? ', ...' : '');
    throw new Error(`The data directory ${dataDir} holds other files (${shown}) and no PostgreSQL cluster: give a new or empty directory`);
  }
  if (process.platform === 'win32') return undefined; // no POSIX modes there: access is by ACL, which chmod does not set
  const mode = statSync(dataDir).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  const previousMode = mode.toString(8);
  try {
    chmodSync(dataDir, mode & PRIVATE);
  } catch (error) {
    // Not its owner, say: the sandbox does not start on a database others can reach.
    throw new Error(`The data directory ${dataDir} is open to other users (mode ${previousMode}) and could not be made private (${(error as Error).message}): chmod 700 it, or choose another data directory`);
  }
  return { dataDir, previousMode };
}
