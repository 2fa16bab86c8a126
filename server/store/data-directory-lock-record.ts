// Who holds a data directory's lock (data-directory-lock.ts): the record its holder writes beside
// it, sandbox.lock.owner, and what can be told from it on this host. Written by rename, so that a
// link or a named pipe planted in its place is replaced rather than written through; read without
// following a link or waiting on a pipe, and only when it is a small file of the expected shape.
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LOCK_OWNER_ENTRY } from './data-directory.ts';

const MAX_RECORD_BYTES = 4096;

/** Who holds a lock: enough to tell, on the same host and in the same pid namespace, whether it is still running. */
export interface Owner {
  pid: number;
  host: string;
  /** Linux: /proc/self/ns/pid's link ("pid:[4026531836]"); containers have their own. Absent elsewhere. */
  pidNamespace?: string;
  token: string;
}

export function thisProcess(): Omit<Owner, 'token'> {
  return { pid: process.pid, host: hostname(), pidNamespace: pidNamespace() };
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/**
 * Written to a new file, then renamed over the record: a symbolic link or a named pipe planted in
 * its place (by someone who could write the directory before it was made private) is replaced,
 * not written through.
 */
export function writeRecord(dataDir: string, recordPath: string, owner: Owner): void {
  const partial = join(dataDir, `${LOCK_OWNER_ENTRY}.${owner.token}.tmp`);
  try {
    writeFileSync(partial, JSON.stringify(owner) + '\n', { mode: 0o600, flag: 'wx' });
    renameSync(partial, recordPath);
  } catch (error) {
    unlinkQuietly(partial);
    const advice = adviceFor(error) ?? 'remove what is at that path, or give another directory';
    throw new Error(`The data directory ${dataDir}: its lock's record ${recordPath} could not be written (${(error as Error).message}): ${advice}`, { cause: error });
  }
}

/**
 * What to do about a file system refusal that is not about what is at the path: a full disk, or a
 * directory this user cannot write (a crash review: a full disk was told to remove the lock).
 */
export function adviceFor(error: unknown): string | undefined {
  switch ((error as NodeJS.ErrnoException)?.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the disk is full (or the quota reached): free some space, or give a directory on another disk';
    case 'EROFS':
      return 'the file system is read-only: give a directory on a writable one';
    case 'EACCES':
    case 'EPERM':
      return "this user may not write there: check the directory's owner and permissions (a start with sudo leaves files owned by root), or give another directory";
    default:
      return undefined;
  }
}

/** Removes the record if it is still the one written with `token` (another start's, after a takeover, stays). */
export function removeRecord(recordPath: string, token: string): void {
  if (readRecord(recordPath)?.token === token) unlinkQuietly(recordPath);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or never made
  }
}

/** The record, if it is a small regular file of the expected shape (never followed through a link, never waited on). */
export function readRecord(recordPath: string): Owner | undefined {
  let fd: number;
  try {
    fd = openSync(recordPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > MAX_RECORD_BYTES) return undefined;
    const buffer = Buffer.alloc(MAX_RECORD_BYTES);
    const read = readSync(fd, buffer, 0, MAX_RECORD_BYTES, 0);
    const record = JSON.parse(buffer.subarray(0, read).toString('utf8')) as Partial<Owner>;
    const valid = Number.isSafeInteger(record.pid) && record.pid! > 0 && typeof record.host === 'string' && typeof record.token === 'string';
    return valid ? (record as Owner) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const sameHost = (owner: Owner) => {
  const here = thisProcess();
  return owner.host === here.host && owner.pidNamespace === here.pidNamespace;
};

/** The pid of the recorded holder when it is a process of this host and pid namespace that no longer exists. */
export function goneHolder(owner: Owner): number | undefined {
  if (!sameHost(owner)) return undefined;
  try {
    process.kill(owner.pid, 0); // signal 0: only asks whether it exists
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? owner.pid : undefined; // EPERM: it exists, another user's
  }
  return isZombie(owner.pid) ? owner.pid : undefined;
}

/** The pid of the recorded holder when it is a process of this host and pid namespace that is running. */
export function aliveHere(owner: Owner): number | undefined {
  return sameHost(owner) && goneHolder(owner) === undefined ? owner.pid : undefined;
}

/**
 * Linux: a process killed but not yet reaped by its parent (a zombie, state Z; or X, being reaped)
 * still answers signal 0. An orphan stays one as long as pid 1 does not reap it: a container
 * started without an init, a sandbox whose launcher (npx, tsx) was killed with it.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = statLine(pid); // "pid (command) state ...": the command may hold spaces and parentheses
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

function statLine(pid: number): string {
  const fd = openSync(`/proc/${pid}/stat`, 'r');
  try {
    const buffer = Buffer.alloc(1024);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
