// PGlite on a worker thread (server/store/pglite-worker-store.ts): the Store contract over its
// message protocol (statements, transactions committed, rolled back and serialised, errors without
// values), what happens when the thread dies, that a closed store lets the process exit, that a
// snapshot which does not load still opens from initdb, and the point of it all: the main event
// loop stays free while PGlite works.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { runSandbox } from '../../server/sandbox-server.ts';
import { engineIdentity } from '../../server/store/pglite-snapshot.ts';
import { openPgliteWorkerStore, withoutRefused, type PgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { isClusterMarker, isWholeSnapshot, tarEntries } from '../../server/store/snapshot-tar.ts';
import { CapturedLogs, PLATFORM_JSON, testConfig } from './support/server.ts';

const ROOT = join(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the PGlite worker store', () => {
  let store: PgliteWorkerStore;
  beforeAll(async () => {
    store = await openPgliteWorkerStore(undefined, { snapshot: true });
    await store.exec('CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL); CREATE TABLE log (at serial, entry text)');
  });
  afterAll(() => store.close());

  it('runs statements with parameters and scripts, and keeps the types PGlite returns', async () => {
    await store.exec("INSERT INTO items VALUES (1, 'one'); INSERT INTO items VALUES (2, 'two')");
    const { rows, rowCount } = await store.query<{ id: number; label: string }>('SELECT id, label FROM items WHERE id >= $1 ORDER BY id', [1]);
    expect(rows).toEqual([{ id: 1, label: 'one' }, { id: 2, label: 'two' }]);
    expect(rowCount).toBe(2);
    expect((await store.query("UPDATE items SET label = label || '!' WHERE id > 0")).rowCount).toBe(2);
    const [typed] = (await store.query<{ at: Date; bytes: Uint8Array; doc: unknown }>("SELECT now() AS at, $1::bytea AS bytes, '{\"a\":[1]}'::jsonb AS doc", [Buffer.from('hi')])).rows;
    expect(typed!.at).toBeInstanceOf(Date);
    expect(typed!.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(typed!.bytes).toString()).toBe('hi');
    expect(typed!.doc).toEqual({ a: [1] });
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    const value = await store.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES ($1, $2)', [10, 'committed']);
      await tx.exec("INSERT INTO items VALUES (11, 'committed too')");
      return 'done';
    });
    expect(value).toBe('done');
    await expect(
      store.transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES ($1, $2)', [12, 'rolled back']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const { rows } = await store.query<{ id: number }>('SELECT id FROM items WHERE id >= 10 ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual([10, 11]);
  });

  it('runs concurrent transactions one after the other, and statements outside them wait their turn', async () => {
    await store.exec('TRUNCATE log');
    const order: string[] = [];
    const transaction = (name: string) =>
      store.transaction(async (tx) => {
        order.push(`${name} begins`);
        await tx.query('INSERT INTO log (entry) VALUES ($1)', [`${name} 1`]);
        await sleep(40); // the other transaction would run here if they interleaved
        await tx.query('INSERT INTO log (entry) VALUES ($1)', [`${name} 2`]);
        order.push(`${name} ends`);
      });
    const a = transaction('a');
    const b = transaction('b');
    await sleep(10);
    const outside = store.query('SELECT count(*)::int AS n FROM log').then(({ rows }) => (order.push('outside'), rows[0]));
    await Promise.all([a, b, outside]);
    // PGlite's lock is first come, first served: a whole, then b whole, then the statement outside.
    expect(order).toEqual(['a begins', 'a ends', 'b begins', 'b ends', 'outside']);
    const { rows } = await store.query<{ entry: string }>('SELECT entry FROM log ORDER BY at');
    expect(rows.map((r) => r.entry)).toEqual(['a 1', 'a 2', 'b 1', 'b 2']);
  });

  it('passes on an SQL error inside a transaction with its code and without the values', async () => {
    const secret = 'notification-password-9f8e7d';
    const error = await store
      .transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES ($1, $2)', [1, secret]);
      })
      .catch((e: unknown) => e as Error & Record<string, unknown>);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '23505', table: 'items', constraint: 'items_pkey', schema: 'public' });
    expect(error).not.toHaveProperty('params');
    expect(error).not.toHaveProperty('detail'); // PostgreSQL's detail quotes the key: `Key (id)=(1) already exists.`
    expect(error).not.toHaveProperty('where');
    const quoted = await store.query('SELECT $1::uuid', [secret]).catch((e: Error) => e);
    expect(quoted).toMatchObject({ code: '22P02', message: 'invalid input syntax for type uuid: "[redacted]"' });
    const outOfRange = await store.query('SELECT $1::int', ['99999999999']).catch((e: Error) => e);
    expect(outOfRange).toMatchObject({ code: '22003', message: 'value "[redacted]" is out of range for type integer' });
    expect(`${JSON.stringify(outOfRange)} ${(outOfRange as Error).stack}`).not.toContain('99999999999');
    for (const e of [error, quoted]) {
      expect(`${JSON.stringify(e)} ${(e as Error).message} ${(e as Error).stack}`).not.toContain(secret);
    }
    // The failed transaction was rolled back and the store goes on.
    expect((await store.query('SELECT label FROM items WHERE id = 1')).rows).toEqual([{ label: 'one!' }]);
  });

  it('leaves the main event loop free while a statement runs', async () => {
    let last = performance.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    try {
      await store.query('SELECT count(*) FROM generate_series(1, 1500000) AS s(n) WHERE n % 7 = 0');
      await store.query('SELECT pg_sleep(1)');
    } finally {
      clearInterval(ticker);
    }
    // The gap up to now too: a loop held for the whole statement fires no tick at all after it.
    longestGap = Math.max(longestGap, performance.now() - last);
    // On the main thread PGlite would hold the loop for the whole statement (pg_sleep's second and
    // more); here a gap is only the main thread waiting for a CPU, which on a loaded run of the suite
    // reached ~190 ms (so not the 150 ms this test once allowed), never near a second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(longestGap).toBeLessThan(900);
  });
});

describe('closing with a transaction still open', () => {
  it('rolls it back and closes, instead of waiting on it forever (a request cut after the shutdown grace)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-close-'));
    try {
      const dataDir = join(dir, 'data');
      const store = await openPgliteWorkerStore(dataDir, { snapshot: true });
      await store.exec('CREATE TABLE charges (id int PRIMARY KEY)');
      let inside!: () => void;
      const started = new Promise<void>((resolve) => (inside = resolve));
      // A long request: one statement, then it waits; its next statement comes after close().
      const request = store.transaction(async (tx) => {
        await tx.query('INSERT INTO charges VALUES (1)');
        inside();
        await sleep(300);
        await tx.query('INSERT INTO charges VALUES (2)');
      });
      await started;
      const closed = store.close();
      const outcome = await Promise.race([closed.then(() => 'closed'), sleep(10_000).then(() => 'still waiting')]);
      expect(outcome).toBe('closed');
      await expect(request).rejects.toThrow('The store is closed');
      const again = await openPgliteWorkerStore(dataDir, { snapshot: true });
      try {
        expect((await again.query('SELECT id FROM charges')).rows).toEqual([]);
      } finally {
        await again.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('aborted while it closes (its lock lost during a stop)', () => {
  it('stops the thread at once: the statement in flight and the close fail with the reason, and PGlite does not close into the directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-abort-closing-'));
    try {
      const store = await openPgliteWorkerStore(join(dir, 'data'), { snapshot: true });
      const inFlight = store.query('SELECT pg_sleep(5)').then(() => 'answered', (e: Error) => e.message);
      await sleep(100);
      const started = Date.now();
      const closed = store.close().then(() => 'closed', (e: Error) => e.message); // waits for the statement, then PGlite's own close would write
      store.abort(new Error('lost its lock'));
      expect(await closed).toBe('lost its lock'); // said to whoever stops it: the directory may be another sandbox's now
      expect(await inFlight).toBe('lost its lock');
      expect(Date.now() - started).toBeLessThan(3_000); // not pg_sleep's 5 s
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('when the worker thread dies', () => {
  it('rejects the calls in flight and every later one, and says so once', async () => {
    const failures: Error[] = [];
    const store = await openPgliteWorkerStore(undefined, { snapshot: true, onFailure: (e) => failures.push(e) });
    const inFlight = store.query('SELECT pg_sleep(5)');
    await sleep(50);
    await store.thread.terminate();
    await expect(inFlight).rejects.toThrow(/PGlite worker thread stopped/);
    await expect(store.query('SELECT 1')).rejects.toThrow(/PGlite worker thread stopped/);
    await expect(store.transaction(async () => 'never')).rejects.toThrow(/PGlite worker thread stopped/);
    expect(failures).toHaveLength(1);
    await store.close(); // closing a dead store is not an error
  });


  it('makes the running sandbox answer 500 at once and log why, once: each refused request is logged by its own line only', async () => {
    const logs = new CapturedLogs();
    const sandbox = await runSandbox(testConfig({ apiSpec: PLATFORM_JSON }), createLogger('info', logs));
    try {
      await (sandbox.store as PgliteWorkerStore).thread.terminate();
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${sandbox.url}/dpy/payment-link/v1/payment-links/by-short-id/abc123`, { signal: AbortSignal.timeout(10_000) }); // a lookup in the store
        expect(res.status).toBe(500);
        expect(await res.json()).toEqual({ error_code: 'internal_error', message: 'Internal server error', status_code: 500 });
      }
      const page = await fetch(`${sandbox.url}/pay/abc123`, { signal: AbortSignal.timeout(10_000) }); // a hosted page, from the store too
      expect(page.status).toBe(500);
      expect(await page.text()).toContain('This page failed on our side. Try again in a moment.');
      expect(logs.lines.filter((l) => l.msg?.startsWith('The store stopped'))).toEqual([
        expect.objectContaining({ level: 50, err: expect.objectContaining({ message: expect.stringContaining('PGlite worker thread stopped') }) }),
      ]);
      expect(logs.lines.filter((l) => l.msg === 'Unexpected error')).toEqual([]);
      expect(logs.lines.filter((l) => l.res?.statusCode === 500)).toHaveLength(4);
    } finally {
      await sandbox.close();
    }
  });
});

describe('the process', () => {
  const run = (code: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

  it('exits once the store is closed, and when a store is left open and idle', () => {
    const store = JSON.stringify(join(ROOT, 'server/store/pglite-worker-store.ts'));
    const closed = run(`
      const { openPgliteWorkerStore } = await import(${store});
      const store = await openPgliteWorkerStore(undefined, { snapshot: true });
      console.log((await store.query('SELECT 41 + 1 AS n')).rows[0].n);
      await store.close();
    `);
    expect(closed.error).toBeUndefined(); // no timeout
    expect(closed.stderr).toBe('');
    expect(closed.stdout.trim()).toBe('42');
    expect(closed.status).toBe(0);
    const idle = run(`
      const { openPgliteWorkerStore } = await import(${store});
      const store = await openPgliteWorkerStore(undefined, { snapshot: true });
      console.log((await store.query('SELECT 41 + 1 AS n')).rows[0].n);
    `);
    expect(idle.error).toBeUndefined();
    expect(idle.stdout.trim()).toBe('42');
    expect(idle.status).toBe(0);
  });

  it('ends its stop after aborting, even when the thread answers the refused call as it stops', () => {
    // A lost lock aborts the store mid-statement; the thread may still answer that statement before
    // it stops. That answer (emitted here, as the thread would post it) once unreferenced the
    // stopping thread: the process then ended with close() unsettled, exit 0, nothing said.
    const store = JSON.stringify(join(ROOT, 'server/store/pglite-worker-store.ts'));
    const aborted = run(`
      const { openPgliteWorkerStore } = await import(${store});
      const store = await openPgliteWorkerStore(undefined, { snapshot: true });
      const inFlight = store.query('SELECT pg_sleep(1)').catch((e) => e.message);
      store.abort(new Error('lost its lock'));
      store.thread.emit('message', { id: 1e9, ok: true, result: { rows: [{ pg_sleep: '' }], rowCount: 1 } });
      await store.close();
      console.log(await inFlight, '| closed');
    `);
    expect(aborted.error).toBeUndefined();
    expect(aborted.stdout.trim()).toBe('lost its lock | closed');
    expect(aborted.status).toBe(0);
  });

  it('leaves out only the options Node refuses for a thread, in either spelling', () => {
    const refused = 'Initiated Worker with invalid execArgv flags: --title, --no-wasm-tier-up';
    expect(withoutRefused(['--conditions=sandbox', '--title', 'x', '--enable-source-maps', '--no-wasm-tier-up', '--title=y'], refused)).toEqual([
      '--conditions=sandbox',
      '--enable-source-maps',
    ]);
    expect(withoutRefused(['--import', 'tsx'], refused)).toEqual(['--import', 'tsx']);
  });

  it('opens in a process started with options a worker thread may not have (V8 and process options)', () => {
    const store = JSON.stringify(join(ROOT, 'server/store/pglite-worker-store.ts'));
    const code = `
      const { openPgliteWorkerStore } = await import(${store});
      const store = await openPgliteWorkerStore(undefined, { snapshot: true });
      console.log((await store.query('SELECT 41 + 1 AS n')).rows[0].n);
      await store.close();
    `;
    // Refused in a worker's execArgv (ERR_WORKER_INVALID_EXEC_ARGV): the thread starts without them.
    const opened = spawnSync(process.execPath, ['--no-wasm-tier-up', '--title=sandbox-under-test', '--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(opened.error).toBeUndefined();
    expect(opened.stderr).toBe('');
    expect(opened.stdout.trim()).toBe('42');
    expect(opened.status).toBe(0);
  });
});

describe('a snapshot that does not load', () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('opens from initdb instead', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pglite-worker-'));
    const file = join(dir, 'corrupt.tar');
    // The right engine, and a whole archive (PG_VERSION last, then its end blocks: pglite-snapshot.ts
    // passes it on), but no data directory inside: PGlite itself refuses it.
    const marker = tarEntries(await readFile(inject('pgliteClusterSnapshot'))).find(isClusterMarker)!;
    const tar = Buffer.concat([marker.bytes, new Uint8Array(1024)]);
    expect(isWholeSnapshot(tar)).toBe(true);
    await writeFile(file, tar);
    await writeFile(join(dir, 'corrupt.json'), JSON.stringify({ engine: engineIdentity(), migrations: ['001'] }));
    const store = await openPgliteWorkerStore(undefined, { snapshot: file });
    try {
      expect((await store.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect((await store.query("SELECT to_regclass('schema_migrations') AS t")).rows).toEqual([{ t: null }]); // initdb, not the snapshot
    } finally {
      await store.close();
    }
  });
});
