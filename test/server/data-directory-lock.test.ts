// One sandbox per PGlite data directory (server/store/data-directory-lock.ts): PGlite ignores
// postmaster.pid, so without a lock a second sandbox on the same directory would open the cluster
// beside the first and both would write it. The first holds sandbox.lock inside the directory; a
// second is refused at once, told what to do; the lock goes when the store closes or its process
// exits, one left by a killed process is taken over once stale (a restart waits for that when the
// process is known to be gone), and starts that take over the same stale lock at once leave one holder.
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, expect, inject, it, onTestFinished, vi } from 'vitest';
import { LOCK_STALE_MS } from '../../server/store/data-directory-lock.ts';
import { openStore, type StoreOptions } from '../../server/store/open-store.ts';
import type { Store } from '../../server/store/store.ts';
import { startProcess } from '../support/processes.ts';
import { AUTH_BUNDLE } from './support/server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const root = await mkdtemp(join(tmpdir(), 'data-directory-lock-'));
afterAll(() => rm(root, { recursive: true, force: true }));
afterEach(() => void vi.useRealTimers());

const snapshot = () => inject('pgliteClusterSnapshot');
const open = (dataDir: string, onFailure?: (error: Error) => void, onWaitingForLock?: StoreOptions['onWaitingForLock']) =>
  openStore({ dataDir, pgliteSnapshot: snapshot(), onFailure, onWaitingForLock });
const lockOf = (dataDir: string) => join(dataDir, 'sandbox.lock');
const recordOf = (dataDir: string) => join(dataDir, 'sandbox.lock.owner');
const record = async (dataDir: string) => JSON.parse(await readFile(recordOf(dataDir), 'utf8'));
const PID_NAMESPACE = expect.stringMatching(/^pid:\[\d+\]$/);
/** The pid of a process that has exited. */
const exitedPid = () =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['-e', '']);
    child.once('exit', () => resolve(child.pid!));
  });
/** A lock as a killed process leaves it: its directory renewed `renewedMsAgo` ago, and its record. */
async function leftLock(dataDir: string, renewedMsAgo: number, owner: unknown) {
  await mkdir(lockOf(dataDir));
  const renewed = new Date(Date.now() - renewedMsAgo);
  await utimes(lockOf(dataDir), renewed, renewed);
  if (owner !== undefined) await writeFile(recordOf(dataDir), typeof owner === 'string' ? owner : JSON.stringify(owner));
}
const inUse = (dataDir: string, renewedAgo: number, wait: number) =>
  `The data directory ${dataDir} is in use by another sandbox (its lock, ${lockOf(dataDir)}, was renewed ${renewedAgo} s ago): stop that one, or give another directory. ` +
  `A lock left by a sandbox that was killed is taken over once it has not been renewed for 10 s: if that is the case, start again in ${wait} s`;
const inUseHere = (dataDir: string, pid: number, renewedAgo: number) =>
  pid === process.pid
    ? `The data directory ${dataDir} is in use by another sandbox of this process (its lock, ${lockOf(dataDir)}, was renewed ${renewedAgo} s ago): close() that one first, or give another directory`
    : `The data directory ${dataDir} is in use by another sandbox (process ${pid} on this host; its lock, ${lockOf(dataDir)}, was renewed ${renewedAgo} s ago): stop that one, or give another directory`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A refusal's message, its ages one second later allowed: a loaded machine may take over 500 ms from planting the lock to reading its age. */
const secondLate = (message: string, renewedAgo: number, wait?: number) =>
  new RegExp(
    `^${escaped(message)
      .replace(`renewed ${renewedAgo} s`, `renewed (${renewedAgo}|${renewedAgo + 1}) s`)
      .replace(`again in ${wait} s`, `again in (${wait}|${(wait ?? 0) - 1}) s`)}$`,
  );
const kept = async (store: Store) => (await store.query<{ v: string }>('SELECT v FROM kept ORDER BY v')).rows.map((row) => row.v);

it('refuses a second store on a directory in use, naming its holder, leaves the first working, and lets one open once the first closed', async () => {
  const dataDir = join(root, 'shared');
  const first = await open(dataDir);
  await first.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('first')");
  expect(existsSync(lockOf(dataDir))).toBe(true);
  expect(await record(dataDir)).toEqual({ pid: process.pid, host: hostname(), pidNamespace: PID_NAMESPACE, token: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  // Its lock was made before PGlite opened (~1 s here, more on a loaded machine) and is renewed every
  // second: renewed 0 to 1 s ago, up to 3 when a timer runs late.
  await expect(open(dataDir)).rejects.toThrow(new RegExp(`^${escaped(inUseHere(dataDir, process.pid, 0)).replace('renewed 0 s', 'renewed [0-3] s')}$`));
  // Also spelt otherwise: a trailing slash, a `..` detour, a relative path.
  for (const spelling of [`${dataDir}/`, `${dataDir}/../shared`, relative(process.cwd(), dataDir)]) {
    await expect(open(spelling), spelling).rejects.toThrow(/is in use by another sandbox/);
  }
  await first.exec("INSERT INTO kept VALUES ('still first')"); // the refused one changed nothing
  expect(await kept(first)).toEqual(['first', 'still first']);
  await first.close();
  expect(existsSync(lockOf(dataDir))).toBe(false);
  expect(existsSync(recordOf(dataDir))).toBe(false); // a clean stop leaves no record
  const second = await open(dataDir);
  try {
    expect(await kept(second)).toEqual(['first', 'still first']);
  } finally {
    await second.close();
  }
});

it('renews its lock every second', async () => {
  const dataDir = join(root, 'renewed');
  const store = await open(dataDir);
  try {
    // The lock's successive mtimes, as its holder writes them (not when they are seen), leaving out
    // the first seen: it may be the one proper-lockfile wrote when it took the lock (a probe of the
    // file system's mtime precision), not a renewal.
    const written = new Set<number>();
    const until = Date.now() + 4_500;
    while (Date.now() < until) {
      written.add((await stat(lockOf(dataDir))).mtimeMs);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const times = [...written].sort((a, b) => a - b).slice(1);
    const intervals = times.slice(1).map((t, i) => t - times[i]!);
    // Renewals every 2.5 s leave one interval at most in this window, ~2.5 s long; every second, two
    // or three. A timer late on a loaded machine lengthens some: the shortest is the one asked for.
    expect(intervals.length, `renewals at ${times.join(', ')}`).toBeGreaterThanOrEqual(1);
    expect(Math.min(...intervals), `renewals at ${times.join(', ')}`).toBeLessThan(1_500);
  } finally {
    await store.close();
  }
});

it('lets exactly one of two stores started at the same time open a new directory', async () => {
  const dataDir = join(root, 'race');
  const results = await Promise.allSettled([open(dataDir), open(dataDir), open(dataDir)]);
  const opened = results.filter((result) => result.status === 'fulfilled');
  const refused = results.filter((result) => result.status === 'rejected');
  expect(opened).toHaveLength(1);
  expect(refused.map((result) => String(result.reason))).toEqual([expect.stringMatching(/is in use by another sandbox/), expect.stringMatching(/is in use by another sandbox/)]);
  const store = opened[0]!.value;
  await store.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('one')");
  await store.close();
  const again = await open(dataDir);
  expect(await kept(again)).toEqual(['one']);
  await again.close();
});

it('refuses a fresh lock whose holder may be alive, saying how long to wait, and takes over a stale one', async () => {
  const dataDir = join(root, 'left');
  await (await open(dataDir)).close();
  const gone = await exitedPid();
  const here = { pid: gone, host: hostname(), pidNamespace: execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim(), token: 'theirs' };
  const elsewhere = join(root, 'record-elsewhere');
  await writeFile(elsewhere, JSON.stringify(here));
  // A holder that may be alive: another host's, another pid namespace's (a container sharing the
  // volume), a record unreadable, missing, or not a file of its own (a link is not followed, a named pipe not waited on).
  const cases: Array<[string, unknown, () => Promise<void>]> = [
    ['another host', { ...here, host: 'another-host' }, async () => {}],
    ['another pid namespace', { ...here, pidNamespace: 'pid:[1]' }, async () => {}],
    ['not JSON', 'not json', async () => {}],
    ['no token', { ...here, token: undefined }, async () => {}],
    ['missing', undefined, async () => {}],
    ['a symbolic link', undefined, () => symlink(elsewhere, recordOf(dataDir))],
    ['a named pipe', undefined, async () => void execFileSync('mkfifo', [recordOf(dataDir)])],
  ];
  for (const [name, owner, plant] of cases) {
    await rm(recordOf(dataDir), { force: true });
    await leftLock(dataDir, 4_000, owner);
    await plant();
    const waits: unknown[] = [];
    await expect(open(dataDir, undefined, (wait) => waits.push(wait)), name).rejects.toThrow(secondLate(inUse(dataDir, 4, 6), 4, 6));
    expect(waits, name).toEqual([]);
    await rm(lockOf(dataDir), { recursive: true });
  }
  // Alive on this host: named (another process), or said to be this process's.
  for (const pid of [process.ppid, process.pid]) {
    await rm(recordOf(dataDir), { force: true });
    await rm(lockOf(dataDir), { recursive: true, force: true });
    await leftLock(dataDir, 2_000, { ...here, pid });
    await expect(open(dataDir)).rejects.toThrow(secondLate(inUseHere(dataDir, pid, 2), 2));
  }
  // Stale: taken over, whoever it names.
  const stale = new Date(Date.now() - LOCK_STALE_MS - 1_000);
  await utimes(lockOf(dataDir), stale, stale);
  const store = await open(dataDir);
  expect((await stat(lockOf(dataDir))).mtimeMs).toBeGreaterThan(Date.now() - 5_000); // ours now
  expect((await record(dataDir)).pid).toBe(process.pid);
  await store.close();
  expect(existsSync(lockOf(dataDir))).toBe(false);
});

it('waits, saying so, for the lock of a process of this host that is gone to go stale, then takes it over', async () => {
  const dataDir = join(root, 'gone');
  await (await open(dataDir)).close();
  const gone = await exitedPid();
  const renewed = Date.now() - 8_000; // killed 8 s ago: 2 s left
  await leftLock(dataDir, 8_000, { pid: gone, host: hostname(), pidNamespace: execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim(), token: 'theirs' });
  const waits: Array<{ waitMs: number }> = [];
  const store = await open(dataDir, undefined, (wait) => waits.push(wait));
  const openedAfter = Date.now() - renewed;
  try {
    expect(waits).toEqual([{ dataDir, holderPid: gone, waitMs: expect.any(Number) }]);
    expect(waits[0]!.waitMs).toBeGreaterThan(0); // what was left of the 2 s when it looked (less on a loaded machine)
    expect(waits[0]!.waitMs).toBeLessThanOrEqual(2_000);
    expect(openedAfter).toBeGreaterThanOrEqual(LOCK_STALE_MS); // not before the lock was stale
    expect(await record(dataDir)).toEqual(expect.objectContaining({ pid: process.pid })); // ours now
  } finally {
    await store.close();
  }
  // Renewed in the future (the clock set back since), its holder gone: refused at once, not waited for.
  await leftLock(dataDir, -3_600_000, { pid: gone, host: hostname(), pidNamespace: execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim(), token: 'theirs' });
  const started = Date.now();
  await expect(open(dataDir)).rejects.toThrow(
    `The data directory ${dataDir} has a lock left by a sandbox that is gone (process ${gone} on this host), renewed in the future (the clock was set back since?), which would not go stale until then: ` +
      `if no sandbox runs on the directory, remove ${lockOf(dataDir)} and start again`,
  );
  expect(Date.now() - started).toBeLessThan(2_000);
  await rm(lockOf(dataDir), { recursive: true });
});

it('writes its record in place of a link or a named pipe planted there, never through it', async () => {
  const dataDir = join(root, 'planted');
  await (await open(dataDir)).close();
  const victim = join(root, 'victim.txt');
  await writeFile(victim, 'precious');
  await symlink(victim, recordOf(dataDir));
  const store = await open(dataDir);
  expect(await readFile(victim, 'utf8')).toBe('precious');
  expect((await record(dataDir)).pid).toBe(process.pid);
  await store.close();
  execFileSync('mkfifo', [recordOf(dataDir)]);
  const again = await open(dataDir); // neither read nor written through: no wait on the pipe
  expect((await record(dataDir)).pid).toBe(process.pid);
  await again.close();
});

it('leaves one holder, which keeps it, when starts take over the same stale lock at once, on a slow file system', { timeout: 60_000 }, async () => {
  const dataDir = join(root, 'takeover');
  await (await open(dataDir)).close();
  await leftLock(dataDir, LOCK_STALE_MS + 10_000, { pid: await exitedPid(), host: hostname(), token: 'theirs' });
  const contender = () =>
    new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ['--require', `${ROOT}test/server/support/slow-lock-stat.cjs`, '--import', 'tsx', 'test/server/support/lock-contender.ts', dataDir], {
        cwd: ROOT,
        env: { ...process.env, HOLD_MS: '6000' }, // past the first renewal (5 s): a holder that lost its lock would say LOST
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.once('exit', () => resolve(output.trim()));
    });
  const outputs = await Promise.all([contender(), contender(), contender(), contender()]);
  expect(outputs.filter((output) => output.startsWith('ACQUIRED')), outputs.join('\n')).toHaveLength(1);
  expect(outputs.filter((output) => output.startsWith('REFUSED The data directory')), outputs.join('\n')).toHaveLength(3);
  expect(outputs.join('\n')).not.toContain('LOST');
  expect(existsSync(lockOf(dataDir))).toBe(false); // the holder released it; the others removed nothing meanwhile
});

it('stops the store, without letting it write more, when its lock is lost while held', async () => {
  const dataDir = join(root, 'lost');
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); // the lock's renewal timer, 5 s
  const failures: Error[] = [];
  const store = await open(dataDir, (error) => failures.push(error));
  await store.exec('CREATE TABLE kept (v text)');
  await rm(lockOf(dataDir), { recursive: true }); // removed by hand, or taken over after a long pause
  await vi.advanceTimersByTimeAsync(5_000);
  await vi.waitFor(() => expect(failures).toHaveLength(1), { timeout: 5_000, interval: 20 });
  vi.useRealTimers();
  expect(failures[0]!.message).toMatch(new RegExp(`^The data directory ${dataDir} lost its lock \\(.*\\): another sandbox may be using it now, so this one stopped its store; restart it$`));
  await expect(store.exec("INSERT INTO kept VALUES ('after')")).rejects.toThrow(failures[0]!.message);
  await store.close();
  const next = await open(dataDir);
  expect(await kept(next)).toEqual([]);
  await next.close();
});

it('refuses every call, before it reaches PGlite, once its lock went 8 s without renewal (an event loop blocked that long)', async () => {
  const dataDir = join(root, 'blocked');
  const failures: Error[] = [];
  const store = await open(dataDir, (error) => failures.push(error));
  await store.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before')");
  // The clock as the store sees it when the loop wakes up, before any renewal timer has run.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 8_500);
  const lost = new RegExp(`^The data directory ${escaped(dataDir)} lost its lock \\(not renewed for (8|9|10|11) s: the event loop was blocked that long, or its timers faked, and another start may have taken it over\\): another sandbox may be using it now, so this one stopped its store; restart it$`);
  await expect(store.exec("INSERT INTO kept VALUES ('after')")).rejects.toThrow(lost);
  vi.useRealTimers();
  expect(failures.map((error) => error.message)).toEqual([expect.stringMatching(lost)]);
  await expect(store.query('SELECT 1')).rejects.toThrow(lost);
  await store.close(); // not let to flush into the directory either
  await rm(lockOf(dataDir), { recursive: true, force: true }); // as a start that took it over would
  const next = await open(dataDir);
  try {
    expect(await kept(next)).toEqual(['before']);
  } finally {
    await next.close();
  }
});

it('leaves alone, when it stops, a lock another start took over from it', async () => {
  const dataDir = join(root, 'taken');
  const store = await open(dataDir);
  // Another start took the lock over (it went stale while this store's loop was blocked): a new lock, its own record.
  await rm(lockOf(dataDir), { recursive: true });
  await mkdir(lockOf(dataDir));
  const theirs = new Date(Date.now() + 3_000); // not the mtime this holder wrote
  await utimes(lockOf(dataDir), theirs, theirs);
  await writeFile(recordOf(dataDir), JSON.stringify({ pid: 1, host: hostname(), token: 'theirs' }));
  await store.close();
  expect(existsSync(lockOf(dataDir))).toBe(true);
  expect((await record(dataDir)).token).toBe('theirs');
});

it('is removed when the sandbox process exits, and a killed one blocks the directory only until its lock is stale', { timeout: 90_000 }, async () => {
  const dataDir = join(root, 'process');
  const env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, API_SPEC: AUTH_BUNDLE, LOG_LEVEL: 'warn', DATABASE_URL: '' };
  const start = async (onOutput?: (log: string) => void) => {
    // One process with tsx's loader, not the tsx launcher: the launcher relays a SIGTERM to its child and,
    // when the child has not answered within 30 ms (a loaded machine), kills it and exits 143 itself,
    // which this test would read as the sandbox's own exit code.
    const started = await startProcess(process.execPath, ['--import', 'tsx', 'server/main.ts'], /listening on http:\/\/\S+/, { cwd: ROOT, env, onOutput });
    onTestFinished(() => started.stop()); // also when an assertion fails midway: no server left running
    return started;
  };
  // A second sandbox process on the same directory: refused, with the reason, and exit code 1.
  const first = await start();
  expect(existsSync(lockOf(dataDir))).toBe(true);
  const holder = (await record(dataDir)).pid;
  const second = await start().then(
    async (started) => {
      await started.stop();
      return 'started';
    },
    (error: Error) => error.message,
  );
  expect(second).toContain('exited with 1 before it was ready');
  // One line for the person who started it, no stack (LOG_LEVEL=warn here; the stack is logged at debug).
  expect(second).toMatch(
    new RegExp(`before it was ready:\\nCannot start the sandbox: The data directory ${escaped(dataDir)} is in use by another sandbox \\(process ${holder} on this host; its lock, .* was renewed \\d s ago\\): stop that one, or give another directory\\n$`),
  );
  expect(second).not.toContain(' at ');
  // Stopped (SIGTERM): the lock and its record go with it.
  await first.stop();
  expect(first.child.exitCode).toBe(0);
  expect(existsSync(lockOf(dataDir))).toBe(false);
  expect(existsSync(recordOf(dataDir))).toBe(false);
  // Killed: the lock stays, and the next start waits for it to go stale (here aged to 6 s, instead
  // of waiting 10), saying so; then it is taken over, the data intact. It is aged to 6 s again and
  // again until the start says it waits: a start slowed past the 4 s left (a loaded machine) found
  // it stale already and had nothing to wait for.
  const killed = await start();
  const killedPid = (await record(dataDir)).pid;
  expect(killedPid).not.toBe(process.pid);
  const exited = new Promise((resolve) => killed.child.once('exit', resolve));
  killed.signal('SIGKILL');
  await exited;
  expect(existsSync(lockOf(dataDir))).toBe(true);
  let waiting = false;
  const aged = (async () => {
    while (!waiting) {
      const renewed = new Date(Date.now() - 6_000);
      await utimes(lockOf(dataDir), renewed, renewed);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const restarted = await start((log) => (waiting ||= log.includes('The data directory is still locked'))).finally(() => (waiting = true));
  await aged;
  expect(restarted.output()).toMatch(new RegExp(`"dataDir":"${escaped(dataDir)}","holderPid":${killedPid},"waitMs":\\d+,"msg":"The data directory is still locked by a sandbox that is gone`));
  await restarted.stop();
  const store = await open(dataDir);
  try {
    expect((await store.query<{ count: number }>("SELECT count(*) FROM sellers WHERE seller_id = '3fa85f64-5717-4562-b3fc-2c963f66afa6'")).rows).toEqual([{ count: 1 }]);
  } finally {
    await store.close();
  }
});

it('tells a full disk, a read-only file system or a directory this user may not write apart from a lock in the way', async () => {
  const { adviceFor } = await import('../../server/store/data-directory-lock-record.ts');
  const failure = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
  expect(adviceFor(failure('ENOSPC'))).toMatch(/^the disk is full/);
  expect(adviceFor(failure('EDQUOT'))).toMatch(/^the disk is full \(or the quota reached\)/);
  expect(adviceFor(failure('EROFS'))).toMatch(/^the file system is read-only/);
  expect(adviceFor(failure('EACCES'))).toMatch(/^this user may not write there: check the directory's owner and permissions/);
  // Anything else is about what is at the path: the messages' own advice (remove it) stands.
  expect(adviceFor(failure('EEXIST'))).toBeUndefined();
  expect(adviceFor(new Error('no code'))).toBeUndefined();
});
