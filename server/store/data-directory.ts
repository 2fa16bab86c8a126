// A PGlite data directory is the sandbox's database: only its owner may reach it. PGlite writes the
// cluster's files readable and writable by everyone (mode 666, whatever the umask), so the
// directory is what keeps other local users out, as PostgreSQL requires of its own data directories
// (it refuses one that group or others can reach, or that another user owns). Checked before the
// key file beside it is written (checkDataDirectory), made or made private before PGlite's thread
// starts (privateDataDirectory), with a few synchronous calls:
// - absent: created with mode 700 (the directories leading to it get the umask's mode, as before);
// - not a directory, a symbolic link, or owned by another user: refused, untouched;
// - holding other files and no cluster (a home, /tmp, the current directory given by mistake):
//   refused, untouched, as initdb refuses a directory that is not empty;
// - open to group or others (a directory made with `mkdir`, or by an earlier version of the
//   sandbox: 755 under the usual umask): its own bits kept, the others' removed, and the same done
//   to everything inside it (files 600 or less, directories 700 or less), which also closes hard
//   links another user may have made to its files meanwhile; the caller is told, to warn that
//   others could read and change the database until then. One that cannot be changed is refused.
// Not on Windows, where access is by ACL, which these modes do not express.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const PRIVATE = 0o700;

/** The lock a running sandbox holds inside its data directory, and who took it last (data-directory-lock.ts). */
export const LOCK_ENTRY = 'sandbox.lock';
export const LOCK_OWNER_ENTRY = 'sandbox.lock.owner';
export const LOCK_TAKEOVER_ENTRY = 'sandbox.lock.takeover';

/**
 * What a PostgreSQL data directory holds at its top (PostgreSQL's layout; postmaster.* while a
 * server runs; the sandbox's lock). A directory with other entries and no PG_VERSION is not one. A
 * first start cut short (the snapshot's PG_VERSION comes last) leaves only these names, and starts again.
 */
const CLUSTER_ENTRIES = new Set([
  'PG_VERSION', 'base', 'global', 'pg_commit_ts', 'pg_dynshmem', 'pg_hba.conf', 'pg_ident.conf', 'pg_logical', 'pg_multixact',
  'pg_notify', 'pg_replslot', 'pg_serial', 'pg_snapshots', 'pg_stat', 'pg_stat_tmp', 'pg_subtrans', 'pg_tblspc', 'pg_twophase',
  'pg_wal', 'pg_xact', 'postgresql.auto.conf', 'postgresql.conf', 'postmaster.opts', 'postmaster.pid', LOCK_ENTRY, LOCK_OWNER_ENTRY, LOCK_TAKEOVER_ENTRY,
]);

/** What was done to an existing directory open to others: its mode before and after (octal, special bits included). */
export interface MadePrivate {
  dataDir: string;
  previousMode: string;
  mode: string;
}

const octal = (mode: number) => (mode & 0o7777).toString(8);
const refuse = (dataDir: string, why: string) => new Error(`The data directory ${dataDir} ${why}`);

/** The DATA_DIR that keeps PGlite in memory: nothing on disk, nothing survives a restart. */
export const IN_MEMORY = 'memory://';

/** A data directory on disk: anything but `memory://` (config refuses other URLs, see `dataDirectoryOf`). */
export const isOnDisk = (dataDir: string | undefined): dataDir is string => !!dataDir && !dataDir.startsWith(IN_MEMORY);

/** Whether a data directory on disk holds a cluster already (its PG_VERSION, which a first start writes last). */
export const holdsCluster = (dataDir: string | undefined): dataDir is string => isOnDisk(dataDir) && existsSync(join(dataDir, 'PG_VERSION'));

/**
 * DATA_DIR as the sandbox uses it: `memory://`, or a directory resolved from `cwd`. Any other URL
 * (`file:///x`, `MEMORY://`, `idb://x`) is refused: PGlite would read some of them as a directory of
 * its own, which the sandbox would then not lock, keep private or give a key file.
 */
export function dataDirectoryOf(value: string, cwd: string): string {
  if (value.startsWith(IN_MEMORY)) return value;
  if (value.includes('://')) {
    throw new Error(`DATA_DIR (--data-dir) must be a directory, or ${IN_MEMORY} to keep nothing on disk; got ${JSON.stringify(value)}`);
  }
  return resolve(cwd, value);
}

const withoutTrailingSlash = (dataDir: string) => dataDir.replace(/(.)\/+$/, '$1'); // `link/` would resolve a symbolic link before lstat sees it

/**
 * Refuses, writing nothing, a data directory the sandbox may not use: openStore checks it before the
 * key file beside it is resolved (a bad key file, in turn, is refused before the directory is made).
 */
export function checkDataDirectory(given: string): void {
  const dataDir = withoutTrailingSlash(given);
  const stats = lstatOrUndefined(dataDir);
  if (stats) refuseUnless(dataDir, stats);
}

/** Creates the directory (mode 700) or checks and makes private an existing one; answers what it changed. */
export function privateDataDirectory(given: string): MadePrivate | undefined {
  const dataDir = withoutTrailingSlash(given);
  let stats = lstatOrUndefined(dataDir);
  if (!stats) {
    try {
      makeDirectories(dataDir);
    } catch (error) {
      throw refuse(dataDir, `could not be created (${(error as Error).message}): give a directory in a folder you can write to`);
    }
    stats = lstatSync(dataDir);
  }
  refuseUnless(dataDir, stats);
  if (process.platform === 'win32' || (stats.mode & 0o077) === 0) return undefined;
  const previousMode = octal(stats.mode);
  const mode = stats.mode & PRIVATE;
  try {
    chmodSync(dataDir, mode);
    privateContents(dataDir);
  } catch (error) {
    throw refuse(dataDir, `is open to other users (mode ${previousMode}) and could not be made private (${(error as Error).message}): chmod -R go-rwx it, or give another directory`);
  }
  return { dataDir, previousMode, mode: octal(mode) };
}

/** Throws unless the existing path is a directory of this user holding a cluster, part of one, or nothing. */
function refuseUnless(dataDir: string, stats: Stats): void {
  if (stats.isSymbolicLink()) throw refuse(dataDir, 'is a symbolic link: give the directory it points to, or a new one');
  if (!stats.isDirectory()) throw refuse(dataDir, 'exists and is not a directory: give a new or empty directory');
  const entries = readdirSync(dataDir);
  const foreign = entries.filter((entry) => !CLUSTER_ENTRIES.has(entry) && !entry.startsWith(`${LOCK_OWNER_ENTRY}.`)); // and the record's partial file
  if (foreign.length && !entries.includes('PG_VERSION')) {
    const shown = foreign.slice(0, 3).map((entry) => JSON.stringify(entry)).join(', ') + (foreign.length > 3 ? ', ...' : '');
    throw refuse(dataDir, `holds other files (${shown}) and no PostgreSQL cluster: give a new or empty directory`);
  }
  const uid = process.platform === 'win32' ? undefined : process.geteuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw refuse(dataDir, `belongs to another user (uid ${stats.uid}), who could read and change the database: give a directory of your own (uid ${uid})`);
  }
}

/** The group's and others' bits taken off everything inside (symbolic links are not followed). */
function privateContents(dir: string): void {
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const entry of readdirSync(next, { withFileTypes: true })) {
      const path = join(next, entry.name);
      if (entry.isSymbolicLink()) continue;
      const stats = lstatSync(path);
      if (stats.mode & 0o077) chmodSync(path, stats.mode & PRIVATE);
      if (entry.isDirectory()) pending.push(path);
    }
  }
}

/**
 * mkdir -p, one level at a time (mode 700 each): Node's own `recursive` mkdirSync never returns
 * where making a directory fails with ENOENT under an existing parent (under /proc, /sys), and the
 * start would hang there.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let path = dir; !existsSync(path) && dirname(path) !== path; path = dirname(path)) missing.unshift(path);
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: PRIVATE });
    } catch (error) {
      // Made meanwhile by another start (two at once on a new directory): used as mkdir -p would.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !lstatSync(path).isDirectory()) throw error;
    }
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refuse(path, `cannot be used (${(error as Error).message}): give a directory in a folder of your own`); // ENOTDIR: a file on the way
  }
}
