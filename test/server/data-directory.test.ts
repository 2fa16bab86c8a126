// A PGlite data directory is private to its owner (server/store/data-directory.ts): PGlite writes the
// cluster's files with mode 666, so a directory other users can enter would let them read and
// change the sandbox's database. A new directory is created with mode 700; an existing one that
// group or others can reach is set to 700 when the store opens, and the sandbox logs it.
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { runSandbox } from '../../server/sandbox-server.ts';
import type { MadePrivate } from '../../server/store/data-directory.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { CapturedLogs, PLATFORM_JSON, testConfig } from './support/server.ts';

const root = await mkdtemp(join(tmpdir(), 'data-directory-'));
afterAll(() => rm(root, { recursive: true, force: true }));
const modeOf = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

/** Opens a store on the directory, writes or reads a row, closes it; answers what it was told. */
async function open(dataDir: string, write?: string): Promise<{ changes: MadePrivate[]; rows: unknown[] }> {
  const changes: MadePrivate[] = [];
  const store = await openPgliteWorkerStore(dataDir, { snapshot: inject('pgliteClusterSnapshot'), onMadePrivate: (change) => changes.push(change) });
  try {
    if (write) await store.exec(`CREATE TABLE kept (v text); INSERT INTO kept VALUES ('${write}')`);
    return { changes, rows: (await store.query('SELECT v FROM kept')).rows };
  } finally {
    await store.close();
  }
}

it('creates a new data directory with mode 700', async () => {
  const dataDir = join(root, 'new', 'nested', 'data');
  const { changes, rows } = await open(dataDir, 'first');
  expect(rows).toEqual([{ v: 'first' }]);
  expect(changes).toEqual([]); // nothing existing was changed
  expect(await modeOf(dataDir)).toBe('700');
  // Inside, PGlite's files are as it writes them (666): the directory is what keeps others out.
  expect(await readdir(dataDir)).toContain('PG_VERSION');
  expect(await modeOf(join(dataDir, 'PG_VERSION'))).toBe('666');
});

it('makes an existing directory that others can reach private, keeps its cluster, and says so once', async () => {
  const dataDir = join(root, 'existing');
  await open(dataDir, 'kept');
  for (const [mode, previous] of [[0o755, '755'], [0o777, '777'], [0o750, '750'], [0o701, '701']] as const) {
    await chmod(dataDir, mode);
    const { changes, rows } = await open(dataDir);
    expect(changes).toEqual([{ dataDir, previousMode: previous }]);
    expect(rows).toEqual([{ v: 'kept' }]);
    expect(await modeOf(dataDir)).toBe('700');
  }
  // Already private: nothing to do, nothing said.
  expect((await open(dataDir)).changes).toEqual([]);
  expect(await modeOf(dataDir)).toBe('700');
});

it('does not touch memory stores or the directories around the data directory', async () => {
  const around = join(root, 'around');
  await mkdir(around, { mode: 0o755 });
  await chmod(around, 0o755);
  const dataDir = join(around, 'data');
  await open(dataDir, 'x');
  expect(await modeOf(around)).toBe('755'); // only what it created, and the data directory itself
  await chmod(dataDir, 0o755);
  const memory = await openPgliteWorkerStore('memory://', { snapshot: inject('pgliteClusterSnapshot'), onMadePrivate: () => expect.unreachable() });
  await memory.close();
  expect(await modeOf(dataDir)).toBe('755');
});

it('is logged by the sandbox as a warning naming the directory and its mode before', async () => {
  const dataDir = join(root, 'sandbox');
  await mkdir(dataDir, { mode: 0o755 });
  await chmod(dataDir, 0o755); // whatever the umask
  const logs = new CapturedLogs();
  const sandbox = await runSandbox(testConfig({ apiSpec: PLATFORM_JSON, dataDir }), createLogger('info', logs));
  try {
    expect((await fetch(`${sandbox.url}/sandbox/v1/jwks`)).status).toBe(200);
  } finally {
    await sandbox.close();
  }
  expect(await modeOf(dataDir)).toBe('700');
  expect(logs.lines.filter((line) => line.msg?.startsWith('The data directory was open to other users'))).toEqual([
    expect.objectContaining({ level: 40, dataDir, previousMode: '755', msg: expect.stringContaining('its mode is now 700') }),
  ]);
});

it.runIf(process.getuid?.() === 0)('refuses, naming the directory and what to do, when it cannot make it private (not its owner)', async () => {
  const { spawnSync } = await import('node:child_process');
  const dataDir = join(root, 'not-mine');
  await mkdir(dataDir);
  await chmod(dataDir, 0o777);
  await chmod(root, 0o755); // reachable by the other user, as the data directory's parent would be
  const module = JSON.stringify(join(import.meta.dirname, '../../server/store/data-directory.ts'));
  const code = `const { privateDataDirectory } = await import(${module}); try { privateDataDirectory(${JSON.stringify(dataDir)}); } catch (error) { console.log(error.message); }`;
  // Run as `nobody`: the directory belongs to root, so it may not change its mode.
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: join(import.meta.dirname, '../..'), encoding: 'utf8', uid: 65534, gid: 65534, timeout: 60_000, env: { ...process.env, HOME: root } });
  expect(run.stderr).toBe('');
  expect(run.stdout.trim()).toBe(`The data directory ${dataDir} is open to other users (mode 777) and could not be made private (EPERM: operation not permitted, chmod '${dataDir}'): chmod 700 it, or choose another data directory`);
  expect(await modeOf(dataDir)).toBe('777');
});

it('refuses a directory that holds other files and no cluster, and leaves it as it was (a home, /tmp, the current directory)', async () => {
  const other = join(root, 'home-like');
  await mkdir(join(other, 'projects'), { recursive: true });
  await (await import('node:fs/promises')).writeFile(join(other, 'notes.txt'), 'mine');
  await chmod(other, 0o1777); // sticky and open to all, as /tmp
  await expect(openPgliteWorkerStore(other, { snapshot: inject('pgliteClusterSnapshot') })).rejects.toThrow(
    `The data directory ${other} holds other files ("notes.txt", "projects") and no PostgreSQL cluster: give a new or empty directory`,
  );
  expect(((await stat(other)).mode & 0o7777).toString(8)).toBe('1777');
  expect((await readdir(other)).sort()).toEqual(['notes.txt', 'projects']); // no cluster written into it
  // The sandbox does not start on it, and says why.
  const logs = new CapturedLogs();
  await expect(runSandbox(testConfig({ apiSpec: PLATFORM_JSON, dataDir: other }), createLogger('info', logs))).rejects.toThrow(/holds other files/);
  expect((await readdir(other)).sort()).toEqual(['notes.txt', 'projects']);
});

it('opens a cluster holding files of its own beside PostgreSQL\'s, and a start cut short before PG_VERSION', async () => {
  const dataDir = join(root, 'with-extra');
  await open(dataDir, 'kept');
  await (await import('node:fs/promises')).writeFile(join(dataDir, 'README.txt'), 'a note of the user');
  expect((await open(dataDir)).rows).toEqual([{ v: 'kept' }]);
  // Only PostgreSQL's names and no PG_VERSION: a first start cut short, started again (pglite-snapshot.test.ts has the whole case).
  const cut = join(root, 'cut');
  await mkdir(join(cut, 'base'), { recursive: true });
  await (await import('node:fs/promises')).writeFile(join(cut, 'postgresql.conf'), '');
  await rm(join(cut, 'base'), { recursive: true });
  await mkdir(join(cut, 'global'));
  const { rows } = await open(cut, 'again');
  expect(rows).toEqual([{ v: 'again' }]);
});
