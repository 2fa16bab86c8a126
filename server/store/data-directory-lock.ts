// One sandbox per data directory. PGlite runs a single-user PostgreSQL that ignores postmaster.pid,
// so two sandboxes on one directory (two `npx` in one folder, two test files given the same
// dataDir) would both open the cluster and write its files, and corrupt the database. The first
// holds a lock; a second is refused at once, before its PGlite thread starts, and told why.
//
// The lock is proper-lockfile's: a directory, sandbox.lock, made inside the data directory (mkdir
// is atomic, also on a network file system) and kept fresh by its holder, which renews its mtime
// every 5 s. It goes when the store closes or the process exits (also on SIGINT and SIGTERM, through
// signal-exit). One left behind by a process that could not remove it (SIGKILL, a crash of the
// machine) is stale once it has not been renewed for 10 s, and the next start takes it over. A lock
// renewed, not a pid file as PostgreSQL's: it holds across containers that share a volume (whose
// pids are in different namespaces), and a pid reused after a restart cannot lock a directory
// for good.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_ENTRY } from './data-directory.ts';

/** Not renewed for this long, a lock is taken to be left by a process that is gone (proper-lockfile's default). */
export const LOCK_STALE_MS = 10_000;

export interface DataDirectoryLock {
  /** Removes the lock (once; later calls do nothing). */
  release(): Promise<void>;
}

/**
 * Locks `dataDir` (which exists: privateDataDirectory made it) for this process, or refuses with
 * what to do. `onLost` is told if the lock is lost while held: it could not be renewed for 10 s
 * (the event loop blocked that long, the directory removed), and another sandbox may have taken
 * it over, so the caller must stop writing to the directory.
 */
export async function lockDataDirectory(dataDir: string, onLost: (error: Error) => void): Promise<DataDirectoryLock> {
  // Imported here, for a data directory only: an in-memory sandbox loads neither it nor signal-exit.
  const { lock } = await import('proper-lockfile');
  const lockfilePath = join(dataDir, LOCK_ENTRY);
  let unlock: () => Promise<void>;
  try {
    unlock = await lock(dataDir, {
      lockfilePath,
      realpath: false, // a symbolic link was refused already (data-directory.ts)
      stale: LOCK_STALE_MS,
      onCompromised: (error) =>
        onLost(new Error(`The data directory ${dataDir} lost its lock (${error.message}): another sandbox may be using it now, so this one stopped its store; restart it`, { cause: error })),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw inUse(dataDir, lockfilePath);
  }
  let released: Promise<void> | undefined;
  return { release: () => (released ??= unlock().catch(() => {})) }; // a lost lock has nothing left to remove
}

function inUse(dataDir: string, lockfilePath: string): Error {
  let renewed: number | undefined;
  try {
    renewed = Date.now() - statSync(lockfilePath).mtimeMs;
  } catch {
    // removed meanwhile: its holder just stopped
  }
  const ago = renewed === undefined ? '' : ` (its lock, ${lockfilePath}, was renewed ${Math.max(0, Math.round(renewed / 1000))} s ago)`;
  const wait = Math.max(1, Math.ceil((LOCK_STALE_MS - (renewed ?? 0)) / 1000));
  return new Error(
    `The data directory ${dataDir} is in use by another sandbox${ago}: stop that one, or give another directory. ` +
      `A lock left by a sandbox that was killed is taken over once it has not been renewed for ${LOCK_STALE_MS / 1000} s: if that is the case, start again in ${wait} s`,
  );
}
