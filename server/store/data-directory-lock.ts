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
//
// A restart right after a SIGKILL would find the lock still fresh. The holder writes who it is
// beside the lock (sandbox.lock.owner: pid, host name, pid namespace); a start that finds the lock
// held by a process of its own host and pid namespace that no longer exists waits, up to 10 s, for
// the lock to go stale, and says so, instead of being refused. Only staleness hands the lock over
// (the record decides between waiting and refusing, never who holds it): a record that is wrong or
// outdated (a pid reused, a holder that has just taken the lock and not yet written it) costs a
// wait, never a second holder.
import { readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LOCK_ENTRY, LOCK_OWNER_ENTRY } from './data-directory.ts';

/** Not renewed for this long, a lock is taken to be left by a process that is gone (proper-lockfile's default). */
export const LOCK_STALE_MS = 10_000;
const RETRY_MS = 250;

/** Who holds a lock: enough to tell, on the same host and in the same pid namespace, whether it is still running. */
interface Owner {
  pid: number;
  host: string;
  /** Linux: /proc/self/ns/pid's link ("pid:[4026531836]"); containers have their own. Absent elsewhere. */
  pidNamespace?: string;
}

export interface DataDirectoryLock {
  /** Removes the lock (once; later calls do nothing). */
  release(): Promise<void>;
}

export interface LockOptions {
  /** Told the lock is lost while held: it could not be renewed for 10 s (the event loop blocked that long, the directory removed), and another sandbox may have taken it over, so the caller must stop writing to the directory. */
  onLost: (error: Error) => void;
  /** Told once when the start waits for the lock of a sandbox that is gone to go stale. */
  onWaiting?: (wait: { dataDir: string; holderPid: number; waitMs: number }) => void;
}

/** Locks `dataDir` (which exists: privateDataDirectory made it) for this process, or refuses with what to do. */
export async function lockDataDirectory(dataDir: string, { onLost, onWaiting }: LockOptions): Promise<DataDirectoryLock> {
  // Imported here, for a data directory only: an in-memory sandbox loads neither it nor signal-exit.
  const { lock } = await import('proper-lockfile');
  const lockfilePath = join(dataDir, LOCK_ENTRY);
  const attempt = () =>
    lock(dataDir, {
      lockfilePath,
      realpath: false, // a symbolic link was refused already (data-directory.ts)
      stale: LOCK_STALE_MS,
      onCompromised: (error) =>
        onLost(new Error(`The data directory ${dataDir} lost its lock (${error.message}): another sandbox may be using it now, so this one stopped its store; restart it`, { cause: error })),
    });
  let unlock: () => Promise<void>;
  let told = false;
  for (;;) {
    try {
      unlock = await attempt();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      const renewedMs = ageOf(lockfilePath);
      const gone = goneOwner(dataDir);
      if (gone === undefined || renewedMs === undefined || renewedMs > LOCK_STALE_MS + 5 * RETRY_MS) {
        if (renewedMs === undefined) continue; // removed meanwhile: its holder just stopped
        throw inUse(dataDir, lockfilePath, renewedMs);
      }
      if (!told) onWaiting?.({ dataDir, holderPid: gone, waitMs: Math.max(0, Math.round(LOCK_STALE_MS - renewedMs)) });
      told = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
  try {
    writeFileSync(join(dataDir, LOCK_OWNER_ENTRY), JSON.stringify(ownerOfThisProcess()) + '\n', { mode: 0o600 });
  } catch {
    // without it, a restart after a crash is refused for 10 s instead of waiting: not a reason to fail
  }
  let released: Promise<void> | undefined;
  return { release: () => (released ??= unlock().catch(() => {})) }; // a lost lock has nothing left to remove
}

function ownerOfThisProcess(): Owner {
  return { pid: process.pid, host: hostname(), pidNamespace: pidNamespace() };
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** The pid of the lock's recorded holder when it is a process of this host and pid namespace that no longer exists. */
function goneOwner(dataDir: string): number | undefined {
  let owner: Partial<Owner>;
  try {
    owner = JSON.parse(readFileSync(join(dataDir, LOCK_OWNER_ENTRY), 'utf8')) as Partial<Owner>;
  } catch {
    return undefined; // none yet, or unreadable: held, as far as we can tell
  }
  const here = ownerOfThisProcess();
  if (!Number.isSafeInteger(owner.pid) || owner.pid! <= 0 || owner.host !== here.host || owner.pidNamespace !== here.pidNamespace) return undefined;
  try {
    process.kill(owner.pid!, 0); // signal 0: only asks whether it exists
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? owner.pid : undefined; // EPERM: it exists, another user's
  }
  return isZombie(owner.pid!) ? owner.pid : undefined;
}

/**
 * Linux: a process killed but not yet reaped by its parent (a zombie, state Z; or X, being reaped)
 * still answers signal 0. An orphan stays one as long as pid 1 does not reap it: a container
 * started without an init, a sandbox whose launcher (npx, tsx) was killed with it.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (command) state ...": the command may hold spaces and parentheses
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

function ageOf(path: string): number | undefined {
  try {
    return Math.max(0, Date.now() - statSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

function inUse(dataDir: string, lockfilePath: string, renewedMs: number): Error {
  const wait = Math.max(1, Math.ceil((LOCK_STALE_MS - renewedMs) / 1000));
  return new Error(
    `The data directory ${dataDir} is in use by another sandbox (its lock, ${lockfilePath}, was renewed ${Math.round(renewedMs / 1000)} s ago): stop that one, or give another directory. ` +
      `A lock left by a sandbox that was killed is taken over once it has not been renewed for ${LOCK_STALE_MS / 1000} s: if that is the case, start again in ${wait} s`,
  );
}
