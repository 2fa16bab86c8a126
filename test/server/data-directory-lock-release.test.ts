// A release while a renewal of the lock is half done: its utimes on disk, its callback not run yet
// (a loaded machine widens that window). The release must still know the lock as its own and remove
// it, or the next start on the directory is refused as if another sandbox held it
// (server/store/data-directory-lock.ts).
import fs, { existsSync, lstatSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { lockDataDirectory } from '../../server/store/data-directory-lock.ts';

// Every utimes of this file's tests answers 1.5 s late (the named export too), as on a loaded machine.
const LATE_MS = 1_500;
const utimes = fs.utimes;
fs.utimes = ((path, atime, mtime, done) => utimes(path, atime, mtime, (error) => setTimeout(() => done(error), LATE_MS))) as typeof fs.utimes;
syncBuiltinESMExports();
afterAll(() => {
  fs.utimes = utimes;
  syncBuiltinESMExports();
});

const root = await mkdtemp(join(tmpdir(), 'data-directory-lock-release-'));
afterAll(() => rm(root, { recursive: true, force: true }));
afterEach(() => void vi.useRealTimers());

/** Resolves once the lock's first renewal is on disk (its answer still to come). */
async function renewalWritten(lockPath: string): Promise<void> {
  const taken = lstatSync(lockPath).mtimeMs;
  const deadline = Date.now() + 5_000;
  while (lstatSync(lockPath).mtimeMs === taken) {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('removes its lock when released while a renewal is written but not answered yet, and the next start takes it', async () => {
  const dataDir = join(root, 'data');
  await mkdir(dataDir);
  const lockPath = join(dataDir, 'sandbox.lock');
  const lock = await lockDataDirectory(dataDir, { onLost: (error) => expect.unreachable(error.message) });
  await renewalWritten(lockPath); // the first renewal comes a second after the lock
  await lock.release();
  expect(existsSync(lockPath)).toBe(false);
  const next = await lockDataDirectory(dataDir, { onLost: (error) => expect.unreachable(error.message) });
  await next.release();
  expect(existsSync(lockPath)).toBe(false);
});

it('counts a renewal from when it was written: one answered 9 s late leaves the lock given up, not fresh', async () => {
  // Counted from its answer, the late renewal made a lock another start could judge stale look
  // fresh, and its release then removed that start's new lock (re-attack review, 2026-11-25).
  const dataDir = join(root, 'late');
  await mkdir(dataDir);
  const lockPath = join(dataDir, 'sandbox.lock');
  const lock = await lockDataDirectory(dataDir, { onLost: () => undefined });
  await renewalWritten(lockPath);
  expect(lock.refusal()).toBeUndefined();
  vi.setSystemTime(Date.now() + 9_000); // its answer, due in under 1.5 s, comes 9 s after the write
  await new Promise((resolve) => setTimeout(resolve, LATE_MS + 200));
  expect(lock.refusal()?.message).toMatch(/lost its lock \(not renewed for (9|10) s/);
  await lock.release();
});
