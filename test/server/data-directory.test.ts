// A PGlite data directory is private to its owner (server/store/data-directory.ts): PGlite writes the
// cluster's files with mode 666, so a directory other users can enter would let them read and
// change the sandbox's database. A new directory is created with mode 700; an existing one open to
// group or others is made private with everything inside it, and the sandbox warns; what is not a
// data directory of this user (a file, a symbolic link, another user's directory, one holding other
// files) is refused and left as it was, before any key file is written beside it.
import { spawnSync } from 'node:child_process';
import { chmod, chown, link, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { runSandbox } from '../../server/sandbox-server.ts';
import type { MadePrivate } from '../../server/store/data-directory.ts';
import { openStore } from '../../server/store/open-store.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { CapturedLogs, PLATFORM_JSON, testConfig } from './support/server.ts';

const root = await mkdtemp(join(tmpdir(), 'data-directory-'));
await chmod(root, 0o755); // other users may walk into it, as into most parents of a data directory
afterAll(() => rm(root, { recursive: true, force: true }));
const modeOf = async (path: string) => ((await stat(path)).mode & 0o7777).toString(8);
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** Opens a store on the directory as the sandbox does (openStore), writes or reads a row, closes it; answers what it was told. */
async function open(dataDir: string, write?: string): Promise<{ changes: MadePrivate[]; rows: unknown[] }> {
  const changes: MadePrivate[] = [];
  const store = await openStore({ dataDir, pgliteSnapshot: inject('pgliteClusterSnapshot'), onMadePrivate: (change) => changes.push(change) });
  try {
    if (write) await store.exec(`CREATE TABLE kept (v text); INSERT INTO kept VALUES ('${write}')`);
    return { changes, rows: (await store.query('SELECT v FROM kept')).rows };
  } finally {
    await store.close();
  }
}
const refusal = (dataDir: string) => openStore({ dataDir, pgliteSnapshot: inject('pgliteClusterSnapshot') });

it('creates a new data directory with mode 700', async () => {
  const dataDir = join(root, 'new', 'nested', 'data');
  const { changes, rows } = await open(dataDir, 'first');
  expect(rows).toEqual([{ v: 'first' }]);
  expect(changes).toEqual([]); // nothing existing was changed
  expect(await modeOf(dataDir)).toBe('700');
  // Inside, PGlite's files are as it writes them (666): the directory is what keeps others out.
  expect(await readdir(dataDir)).toContain('PG_VERSION');
  expect(await modeOf(join(dataDir, 'PG_VERSION'))).toBe('666');
  // The store alone (no openStore) does the same.
  const alone = join(root, 'alone');
  await (await openPgliteWorkerStore(alone, { snapshot: inject('pgliteClusterSnapshot') })).close();
  expect(await modeOf(alone)).toBe('700');
});

it('makes an existing directory open to others private with everything inside it, keeps its cluster, and says so once', async () => {
  const dataDir = join(root, 'existing');
  await open(dataDir, 'kept');
  for (const [mode, previous, after] of [[0o755, '755', '700'], [0o777, '777', '700'], [0o2750, '2750', '700'], [0o1701, '1701', '700'], [0o575, '575', '500']] as const) {
    await chmod(dataDir, mode);
    await chmod(join(dataDir, 'PG_VERSION'), 0o666);
    const { changes, rows } = await (after === '500' ? (async () => {
      const changes: MadePrivate[] = [];
      const { privateDataDirectory } = await import('../../server/store/data-directory.ts');
      const change = privateDataDirectory(dataDir); // the owner's own bits are kept, even without write
      if (change) changes.push(change);
      await chmod(dataDir, 0o700);
      return { changes, rows: [{ v: 'kept' }] };
    })() : open(dataDir));
    expect(changes).toEqual([{ dataDir, previousMode: previous, mode: after }]);
    expect(rows).toEqual([{ v: 'kept' }]);
    if (after === '700') expect(await modeOf(dataDir)).toBe('700');
    expect(await modeOf(join(dataDir, 'PG_VERSION'))).toBe('600'); // and its files
  }
  // Already private: nothing to do, nothing said.
  expect((await open(dataDir)).changes).toEqual([]);
  expect(await modeOf(dataDir)).toBe('700');
});

it.runIf(asRoot)('closes a hard link another user made to a file while the directory was open', async () => {
  const dataDir = join(root, 'linked');
  await open(dataDir, 'kept');
  await chmod(dataDir, 0o755);
  const theirs = join(root, 'theirs');
  await mkdir(theirs);
  await chown(theirs, NOBODY, NOBODY);
  await link(join(dataDir, 'PG_VERSION'), join(theirs, 'stolen')); // made while the directory was open
  const read = () => spawnSync('cat', [join(theirs, 'stolen')], { uid: NOBODY, gid: NOBODY, encoding: 'utf8' });
  expect(read().status).toBe(0); // the other user reads the cluster's file through the link
  expect((await open(dataDir)).changes).toHaveLength(1);
  expect(read().status).not.toBe(0); // the file itself is 600 now, whatever the path
  expect(await modeOf(join(theirs, 'stolen'))).toBe('600');
});

it('does not touch memory stores or the directories around the data directory', async () => {
  const around = join(root, 'around');
  await mkdir(around);
  await chmod(around, 0o755);
  const dataDir = join(around, 'data');
  await open(dataDir, 'x');
  expect(await modeOf(around)).toBe('755'); // only the data directory and what is inside
  await chmod(dataDir, 0o755);
  const memory = await openStore({ dataDir: 'memory://', pgliteSnapshot: inject('pgliteClusterSnapshot'), onMadePrivate: () => expect.unreachable() });
  await memory.close();
  expect(await modeOf(dataDir)).toBe('755');
});

/** The log of a sandbox started on the directory, which answered a request, then stopped. */
async function logsOfAStart(dataDir: string): Promise<CapturedLogs> {
  const logs = new CapturedLogs();
  const sandbox = await runSandbox(testConfig({ apiSpec: PLATFORM_JSON, dataDir }), createLogger('info', logs));
  try {
    expect((await fetch(`${sandbox.url}/sandbox/v1/jwks`)).status).toBe(200);
  } finally {
    await sandbox.close();
  }
  return logs;
}

it('is logged by the sandbox as a warning naming the directory and its modes', async () => {
  const dataDir = join(root, 'sandbox');
  await mkdir(dataDir);
  await chmod(dataDir, 0o755); // whatever the umask
  const logs = await logsOfAStart(dataDir);
  expect(await modeOf(dataDir)).toBe('700');
  expect(logs.lines.filter((line) => line.msg?.startsWith('The data directory was open to other users'))).toEqual([
    expect.objectContaining({ level: 40, dataDir, previousMode: '755', mode: '700', msg: expect.stringContaining('start from a new data directory') }),
  ]);
});

it('is started on a database a newer version migrated, with a warning naming the migrations it does not have', async () => {
  const dataDir = join(root, 'migrated-by-newer');
  await (await runSandbox(testConfig({ apiSpec: PLATFORM_JSON, dataDir }), createLogger('silent'))).close();
  const store = await openStore({ dataDir });
  await store.query("INSERT INTO schema_migrations (version, name) VALUES ('999', 'later_change')");
  await store.close();
  const logs = await logsOfAStart(dataDir);
  expect(logs.lines.filter((line) => line.newer)).toEqual([
    expect.objectContaining({ level: 40, newer: ['999_later_change'], msg: expect.stringContaining('a newer version migrated it') }),
  ]);
});

it('refuses what is not a data directory, leaves it as it was and writes no key file beside it', async () => {
  const home = join(root, 'home-like');
  await mkdir(join(home, 'projects'), { recursive: true });
  await writeFile(join(home, 'notes.txt'), 'mine');
  await chmod(home, 0o1777); // sticky and open to all, as /tmp
  const target = join(root, 'target');
  await mkdir(target);
  await chmod(target, 0o755);
  const file = join(root, 'a-file');
  await writeFile(file, 'x');
  const cases: Array<[string, string]> = [
    [home, `The data directory ${home} holds other files ("notes.txt", "projects") and no PostgreSQL cluster: give a new or empty directory`],
    [file, `The data directory ${file} exists and is not a directory: give a new or empty directory`],
  ];
  for (const [name, to] of [['link', target], ['dangling', join(root, 'nowhere')], ['file-link', file]] as const) {
    const path = join(root, name);
    await symlink(to, path);
    cases.push([path, `The data directory ${path} is a symbolic link: give the directory it points to, or a new one`]);
    cases.push([`${path}/`, `The data directory ${path} is a symbolic link: give the directory it points to, or a new one`]); // not resolved by the slash
  }
  // A file on the way to it.
  cases.push([join(file, 'sub'), `The data directory ${join(file, 'sub')} cannot be used (ENOTDIR: not a directory, lstat '${join(file, 'sub')}'): give a directory in a folder of your own`]);
  for (const [dataDir, message] of cases) {
    await expect(refusal(dataDir), dataDir).rejects.toThrow(message);
    expect(existsSync(`${dataDir.replace(/\/$/, '')}.encryption-key`), dataDir).toBe(false);
  }
  expect(await modeOf(home)).toBe('1777');
  expect((await readdir(home)).sort()).toEqual(['notes.txt', 'projects']); // no cluster written into it
  expect(await modeOf(target)).toBe('755'); // not changed through the link
  expect(await readdir(target)).toEqual([]);
  expect(existsSync(join(root, 'nowhere'))).toBe(false);
  // In a folder where no directory can be made (Node's recursive mkdirSync never returned there): said so, at once.
  for (const dataDir of ['/proc/no-such-data-directory', '/proc/no-such-folder/data']) {
    const first = dataDir.split('/').slice(0, 3).join('/');
    await expect(refusal(dataDir)).rejects.toThrow(
      `The data directory ${dataDir} could not be created (ENOENT: no such file or directory, mkdir '${first}'): give a directory in a folder you can write to`,
    );
    expect(existsSync(`${dataDir}.encryption-key`)).toBe(false);
  }
  // The sandbox does not start on one, and says why.
  await expect(runSandbox(testConfig({ apiSpec: PLATFORM_JSON, dataDir: home }), createLogger('silent'))).rejects.toThrow(/holds other files/);
});

it.runIf(asRoot)('refuses a directory that belongs to another user, whatever its mode, as PostgreSQL does', async () => {
  for (const mode of [0o755, 0o700]) {
    const dataDir = join(root, `owned-by-nobody-${mode.toString(8)}`);
    await mkdir(dataDir);
    await chmod(dataDir, mode);
    await chown(dataDir, NOBODY, NOBODY);
    await expect(refusal(dataDir)).rejects.toThrow(
      `The data directory ${dataDir} belongs to another user (uid ${NOBODY}), who could read and change the database: give a directory of your own (uid 0)`,
    );
    expect(await modeOf(dataDir)).toBe(mode.toString(8));
    expect(await readdir(dataDir)).toEqual([]);
    expect(existsSync(`${dataDir}.encryption-key`)).toBe(false);
  }
});

it('opens a cluster holding files of its own beside PostgreSQL\'s, and a start cut short before PG_VERSION', async () => {
  const dataDir = join(root, 'with-extra');
  await open(dataDir, 'kept');
  await writeFile(join(dataDir, 'README.txt'), 'a note of the user');
  expect((await open(dataDir)).rows).toEqual([{ v: 'kept' }]);
  // Only PostgreSQL's names and no PG_VERSION: a first start cut short, started again (pglite-snapshot.test.ts has the whole case).
  const cut = join(root, 'cut');
  await mkdir(join(cut, 'global'), { recursive: true });
  await writeFile(join(cut, 'postgresql.conf'), '');
  expect((await open(cut, 'again')).rows).toEqual([{ v: 'again' }]);
});
