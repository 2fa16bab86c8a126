// One sandbox per data directory. PGlite runs a single-user PostgreSQL that ignores postmaster.pid,
// so two sandboxes on one directory (two `npx` in one folder, two test files given the same
// dataDir) would both open the cluster and write its files, and corrupt the database. The first
// holds a lock; a second is refused at once, before its PGlite thread starts, and told why.
//
// The lock is proper-lockfile's: a directory, sandbox.lock, made inside the data directory (mkdir
// is atomic, also on a network file system) and kept fresh by its holder, which renews its mtime
// every second. It goes when the store closes or the process exits (also on SIGINT and SIGTERM, through
// signal-exit). One left behind by a process that could not remove it (SIGKILL, a crash of the
// machine) is stale once it has not been renewed for 10 s, and the next start takes it over. A lock
// renewed, not a pid file as PostgreSQL's: it holds across containers that share a volume (whose
// pids are in different namespaces), and a pid reused after a restart cannot lock a directory
// for good.
//
// proper-lockfile would take a stale lock over itself in three steps (is it stale, remove it, make
// a new one), and starts that find the same stale lock at once can then remove each other's new
// lock and each believe it holds it. Here proper-lockfile never judges a lock stale; a start that
// finds one stale takes it over one at a time: it makes sandbox.lock.takeover (mkdir, so only one
// start at a time), checks the lock is still stale, removes it, and removes its own mark; then it
// tries to take the lock like any start, and mkdir lets only one start have it. The one case left
// open: a start killed inside those few synchronous calls leaves its mark, removed once 5 s old,
// and two starts removing the same abandoned mark at once could both go on.
//
// A holder whose event loop was blocked must not act on a lock another start may have taken over
// meanwhile: proper-lockfile renews in two steps (read the mtime, check it is its own, write a new
// one) and removes the lock by its path on release and on exit. It is given a file system of its
// own (guardedFs): a renewal after 8 s without one is refused (the lock is reported lost and the
// store stops), two seconds before others may take it over, and the store asks before each call
// whether that time has passed (refusal), since the calls a waking event loop runs come before the
// renewal; the lock is removed only while its mtime is still the one this holder wrote and too
// recent for anyone to have judged it stale. Renewals run every second (proper-lockfile's shortest),
// so an event loop has to be blocked 7 to 8 s at once before a holder gives its lock up. A renewal
// takes three turns of the event loop (the timer; stat's callback, where its lateness is judged;
// utimes' callback, from when the next one counts), each behind whatever the thread is doing: a
// start on a starved CPU (its main thread loading modules and building the contract's validator
// while PGlite opens) lost its lock with renewals every 2.5 s (on one CPU shared with 12 busy
// processes), and kept it with renewals every second. A margin, not a cure: a CPU starved more
// still loses it (14 busy processes did).
//
// Beside the lock, its holder writes a record (sandbox.lock.owner: pid, host name, pid namespace,
// and a token of this lock), and removes it when it releases the lock. A restart right after a
// SIGKILL finds the lock still fresh: when the record names a process of this host and pid
// namespace that no longer exists, the start waits (up to 10 s, and says so) for the lock to go
// stale instead of being refused. The record only decides between waiting and refusing: a wrong
// or outdated one (a pid reused since) costs a refusal, as without it.
import { randomUUID } from 'node:crypto';
import { lstatSync, mkdir, mkdirSync, realpath, rmdir, rmdirSync, stat, utimes } from 'node:fs';
import { join } from 'node:path';
import { adviceFor, aliveHere, goneHolder, readRecord, removeRecord, thisProcess, writeRecord } from './data-directory-lock-record.ts';
import { LOCK_ENTRY, LOCK_OWNER_ENTRY, LOCK_TAKEOVER_ENTRY } from './data-directory.ts';

/** Not renewed for this long, a lock is taken to be left by a process that is gone (proper-lockfile's default). */
export const LOCK_STALE_MS = 10_000;
/** proper-lockfile's own staleness, never reached: takeovers are this module's (takeOver). */
const NEVER_STALE_MS = Number.MAX_SAFE_INTEGER;
const RENEW_MS = 1_000;
/** A holder that has not renewed its lock for this long gives it up rather than renew it late (guardedFs). */
const GIVE_UP_MS = 8_000;
/** A takeover mark older than this was left by a start killed while taking a lock over (it takes milliseconds). */
const TAKEOVER_ABANDONED_MS = 5_000;
const RETRY_MS = 250;

export interface DataDirectoryLock {
  /** Removes the lock (once; later calls do nothing). */
  release(): Promise<void>;
  /**
   * Why the directory must not be written now: the lock was not renewed for 8 s (the event loop
   * was blocked, and another start may take it over from 10 s), or was lost. Checked before each
   * call to the store: the calls an event loop runs as it wakes from a long block come before the
   * renewal that would report the lock lost.
   */
  refusal(): Error | undefined;
}

export interface LockOptions {
  /** Told the lock is lost while held: it was removed, or another start took it over after it went 10 s without renewal (the event loop blocked that long), so the caller must stop writing to the directory. */
  onLost: (error: Error) => void;
  /** Told once when the start waits for the lock of a sandbox that is gone to go stale. */
  onWaiting?: (wait: { dataDir: string; holderPid: number; waitMs: number }) => void;
}

/** Locks `dataDir` (which exists: privateDataDirectory made it) for this process, or refuses with what to do. */
export async function lockDataDirectory(dataDir: string, { onLost, onWaiting }: LockOptions): Promise<DataDirectoryLock> {
  // Imported here, for a data directory only: an in-memory sandbox loads neither it nor signal-exit.
  const lockfile = await import('proper-lockfile');
  const lockfilePath = join(dataDir, LOCK_ENTRY);
  const recordPath = join(dataDir, LOCK_OWNER_ENTRY);
  const guard = guardedFs();
  let lost: Error | undefined;
  const options = {
    lockfilePath,
    realpath: false, // a symbolic link was refused already (data-directory.ts)
    stale: NEVER_STALE_MS,
    update: RENEW_MS,
    fs: guard.fs,
    onCompromised: (error: Error) => {
      lost ??= new Error(`The data directory ${dataDir} lost its lock (${lostBecause(error)}): another sandbox may be using it now, so this one stopped its store; restart it`, { cause: error });
      onLost(lost);
    },
  };
  const deadline = Date.now() + LOCK_STALE_MS + 2_000;
  let told = false;
  let unlock: () => Promise<void>;
  for (;;) {
    if (Date.now() > deadline) throw timedOut(dataDir, lockfilePath);
    try {
      unlock = await lockfile.lock(dataDir, options);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw cannotLock(dataDir, lockfilePath, error as Error);
    }
    const renewedMs = ageOf(lockfilePath);
    if (renewedMs === undefined) continue; // removed meanwhile: its holder just stopped
    if (!isDirectory(lockfilePath)) throw cannotLock(dataDir, lockfilePath, new Error(`${lockfilePath} is not a lock directory`));
    if (renewedMs >= LOCK_STALE_MS) {
      if (!takeOver(dataDir, lockfilePath)) await sleep(RETRY_MS / 5); // another start is taking it over
      continue;
    }
    const holder = readRecord(recordPath);
    const gone = holder && goneHolder(holder);
    // Its holder gone, a lock renewed in the future would not go stale until then: not waited for.
    if (gone !== undefined && renewedMs < -1_000) throw renewedInTheFuture(dataDir, lockfilePath, gone);
    if (gone === undefined) throw inUse(dataDir, lockfilePath, renewedMs, holder && aliveHere(holder));
    if (!told) onWaiting?.({ dataDir, holderPid: gone, waitMs: Math.max(0, Math.round(LOCK_STALE_MS - renewedMs)) });
    told = true;
    await sleep(RETRY_MS);
  }
  const token = randomUUID();
  try {
    writeRecord(dataDir, recordPath, { ...thisProcess(), token });
  } catch (error) {
    await unlock().catch(() => {});
    throw error;
  }
  let released: Promise<void> | undefined;
  const release = async () => {
    removeRecord(recordPath, token); // a clean stop leaves no record: the next start does not wait
    await unlock().catch(() => {}); // a lost lock has nothing left to remove
  };
  const refusal = () => {
    if (lost) return lost;
    const late = guard.lateMs();
    if (late < GIVE_UP_MS) return undefined;
    guard.giveUp(); // its next renewal is refused, which proper-lockfile reports
    lost = new Error(`The data directory ${dataDir} lost its lock (${notRenewed(late)}): another sandbox may be using it now, so this one stopped its store; restart it`);
    return lost;
  };
  return { release: () => (released ??= release()), refusal };
}

const notRenewed = (lateMs: number) => `not renewed for ${Math.round(lateMs / 1000)} s: the event loop was blocked that long, or its timers faked, and another start may have taken it over`;

/**
 * proper-lockfile's file system for one lock (see the header): node:fs, except that a renewal
 * (`utimes`) more than GIVE_UP_MS after the last one fails as if the lock were gone, which
 * proper-lockfile reports as compromised, and that the lock is removed (`rmdir`, `rmdirSync` on
 * exit) only while its mtime is the last one written here.
 */
function guardedFs() {
  let renewedAt = Date.now();
  let writtenMs: number | undefined;
  // A renewal whose utimes may be on disk already, its callback not run yet: a release in that
  // window found the new mtime, not the last one written, and left the lock behind (a loaded run).
  let writingMs: number | undefined;
  let givenUp = false;
  /** Still the lock this holder wrote, and too recent for any start to have judged it stale since. */
  const ours = (path: string) => {
    try {
      const mtimeMs = lstatSync(path).mtimeMs;
      const written = [writtenMs, writingMs].some((ms) => ms !== undefined && Math.abs(mtimeMs - ms) < 1_000);
      return written && Date.now() - renewedAt < LOCK_STALE_MS - 1_000;
    } catch {
      return false;
    }
  };
  const fsOfTheLock = {
    mkdir(path: string, done: (error: NodeJS.ErrnoException | null) => void) {
      mkdir(path, (error) => {
        if (!error) renewedAt = Date.now(); // taken: counted from now, however long the start waited for it
        done(error);
      });
    },
    stat,
    realpath,
    utimes(path: string, atime: Date, mtime: Date, done: (error: NodeJS.ErrnoException | null) => void) {
      const late = Date.now() - renewedAt;
      if (givenUp || late >= GIVE_UP_MS) {
        givenUp = true;
        return done(Object.assign(new Error(notRenewed(late)), { code: 'ENOENT' }));
      }
      // Counted from when it is written, not from its answer: an answer that came late must not
      // make a lock that may have gone stale meanwhile look fresh (re-attack review, 2026-11-25).
      const writtenAt = Date.now();
      writingMs = mtime.getTime();
      utimes(path, atime, mtime, (error) => {
        writingMs = undefined;
        if (!error) {
          renewedAt = writtenAt;
          writtenMs = mtime.getTime();
        }
        done(error);
      });
    },
    rmdir(path: string, done: (error: NodeJS.ErrnoException | null) => void) {
      if (!ours(path)) return done(null); // another start's lock now: left alone
      rmdir(path, done);
    },
    rmdirSync(path: string) {
      if (ours(path)) rmdirSync(path);
    },
  };
  return {
    fs: fsOfTheLock,
    lateMs: () => Date.now() - renewedAt,
    giveUp: () => void (givenUp = true),
  };
}

/** What proper-lockfile says when a lock is compromised, in the sandbox's words. */
function lostBecause(error: Error): string {
  if (error.message.startsWith('not renewed for')) return error.message;
  if (error.message.startsWith('Unable to update lock')) return 'another start changed it: it took it over';
  if ((error as NodeJS.ErrnoException).syscall !== undefined || /ENOENT/.test(error.message)) return `it was removed (${error.message})`;
  return error.message;
}

/**
 * Removes the stale lock if this start is the one taking it over (see the header); answers false
 * when another start is. Synchronous, so that nothing of this process runs in between.
 */
function takeOver(dataDir: string, lockfilePath: string): boolean {
  const mark = join(dataDir, LOCK_TAKEOVER_ENTRY);
  try {
    mkdirSync(mark, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotLock(dataDir, lockfilePath, error as Error);
    if ((ageOf(mark) ?? 0) > TAKEOVER_ABANDONED_MS) rmdirQuietly(mark);
    return false;
  }
  try {
    // Still stale now that no other start can remove it: a start that took it over before us made a fresh one.
    if ((ageOf(lockfilePath) ?? 0) >= LOCK_STALE_MS) rmdirSync(lockfilePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw cannotLock(dataDir, lockfilePath, error as Error);
  } finally {
    rmdirQuietly(mark);
  }
  return true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long ago the entry was last changed (negative: in the future; a link's own time, not its target's), or undefined when it is gone. */
function ageOf(path: string): number | undefined {
  try {
    return Date.now() - lstatSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return true; // gone: the next attempt takes it
  }
}

function rmdirQuietly(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // gone already (or not ours to remove: the next attempt says so)
  }
}

function inUse(dataDir: string, lockfilePath: string, renewedMs: number, alivePid: number | undefined): Error {
  const future = renewedMs < -1_000; // another host's clock ahead of ours, or ours set back
  const renewed = `its lock, ${lockfilePath}, was renewed ${future ? 'in the future (clocks differ, or were set back)' : `${Math.max(0, Math.round(renewedMs / 1000))} s ago`}`;
  if (alivePid === process.pid) {
    return new Error(`The data directory ${dataDir} is in use by another sandbox of this process (${renewed}): close() that one first, or give another directory`);
  }
  if (alivePid !== undefined) {
    return new Error(`The data directory ${dataDir} is in use by another sandbox (process ${alivePid} on this host; ${renewed}): stop that one, or give another directory`);
  }
  const wait = Math.max(1, Math.ceil((LOCK_STALE_MS - Math.max(0, renewedMs)) / 1000));
  return new Error(
    `The data directory ${dataDir} is in use by another sandbox (${renewed}): stop that one, or give another directory. ` +
      (future
        ? `If none runs on it, remove ${lockfilePath} and start again`
        : `A lock left by a sandbox that was killed is taken over once it has not been renewed for ${LOCK_STALE_MS / 1000} s: if that is the case, start again in ${wait} s`),
  );
}

function renewedInTheFuture(dataDir: string, lockfilePath: string, gonePid: number): Error {
  return new Error(
    `The data directory ${dataDir} has a lock left by a sandbox that is gone (process ${gonePid} on this host), renewed in the future ` +
      `(the clock was set back since?), which would not go stale until then: if no sandbox runs on the directory, remove ${lockfilePath} and start again`,
  );
}

function timedOut(dataDir: string, lockfilePath: string): Error {
  return new Error(`The data directory ${dataDir} could not be locked within ${(LOCK_STALE_MS + 2_000) / 1000} s (other sandboxes kept taking ${lockfilePath}): start again`);
}

function cannotLock(dataDir: string, lockfilePath: string, error: Error): Error {
  const advice = adviceFor(error) ?? `if no sandbox runs on the directory, remove ${lockfilePath} and start again`;
  return new Error(`The data directory ${dataDir} could not be locked (${error.message}): ${advice}`, { cause: error });
}
