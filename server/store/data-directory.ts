// A PGlite data directory is the sandbox's database: only its owner may reach it. PGlite writes the
// cluster's files readable and writable by everyone (mode 666, whatever the umask), so the
// directory is what keeps other local users out, as PostgreSQL requires of its own data directories
// (it refuses to start on one that group or others can reach). A directory the sandbox creates is
// created with mode 700; an existing one that group or others can reach (a directory made with
// `mkdir`, or by an earlier version of the sandbox, 755 under the usual umask) is set to 700 at
// opening, and the caller is told so. Synchronous: a few system calls, before PGlite's thread starts.
import { chmodSync, mkdirSync, statSync } from 'node:fs';

const PRIVATE = 0o700;

/** What was done to an existing directory: its mode before, when it was changed. */
export interface MadePrivate {
  dataDir: string;
  previousMode: string;
}

/** Creates the directory (mode 700) or makes an existing one private; answers what it changed. */
export function privateDataDirectory(dataDir: string): MadePrivate | undefined {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE });
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
