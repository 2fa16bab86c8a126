// The worker thread that owns the sandbox's PGlite (started by pglite-worker-store.ts): PGlite runs
// each statement synchronously in WebAssembly, so on the main thread 32 concurrent requests drained
// their queries back to back and the event loop read sockets in bursts (bench/RESULTS.md). Here the
// SQL runs on its own thread and the main thread only posts messages.
//
// The protocol is hand-written because PGlite's own `PGliteWorker` targets browsers (Web Workers,
// BroadcastChannel, navigator.locks for leader election between tabs), none of which fits one Node
// process with one worker. Requests: {id, op, sql, params, tx}; answers: {id, ok, result | error}.
// A transaction is PGlite's own `db.transaction`, kept open by a promise: `begin` answers once its
// callback runs (PGlite's lock taken), the statements tagged with its id run on it, `commit`
// resolves the promise, `rollback` rejects it. Statements outside a transaction go through
// `db.query`, which PGlite queues behind any open transaction, as before.
import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { startMaintenance } from './pglite-maintenance.ts';
import { pgliteStartParams } from './pglite-settings.ts';
import { blobOf } from './shared-bytes.ts';
import type { WorkerData, WorkerError, WorkerNotice, WorkerOpen, WorkerReply, WorkerRequest } from './pglite-worker-protocol.ts';

const port = parentPort!;
const { dataDir, maintenance } = workerData as WorkerData;

/**
 * The fields of a PostgreSQL error that may cross: none that store.ts's rethrowWithoutValues takes
 * out (`params`, `detail`, `where`, `hint`, `internalQuery`: they may quote values).
 */
const SAFE_FIELDS = ['code', 'severity', 'schema', 'table', 'column', 'dataType', 'constraint', 'position', 'routine', 'query'] as const;

function describe(error: unknown): WorkerError {
  if (!(error instanceof Error)) return { message: String(error) };
  const described: WorkerError = { message: error.message };
  for (const field of SAFE_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string') described[field] = value;
  }
  return described;
}

async function open(): Promise<PGlite> {
  const [{ snapshot, fsBundle, ...compiled }] = (await once(port, 'message')) as [WorkerOpen];
  /** The engine the main thread compiled, and PostgreSQL's settings for the sandbox (pglite-settings.ts). */
  const engine = { ...compiled, fsBundle: fsBundle && blobOf(fsBundle), startParams: pgliteStartParams() };
  // The data directory exists already: the main thread made it private first (data-directory.ts).
  if (!snapshot) return PGlite.create({ ...engine, dataDir });
  // A snapshot that does not load: initdb, as without one.
  return PGlite.create({ ...engine, dataDir, loadDataDir: blobOf(snapshot, 'application/x-tar') }).catch(() => PGlite.create({ ...engine, dataDir }));
}

/** Thrown inside a transaction's callback so that PGlite rolls it back. */
const ROLLBACK = Symbol('rollback');

interface Open {
  tx: Transaction;
  finish(commit: boolean): void;
  /** Settles when PGlite has committed or rolled back. */
  done: Promise<unknown>;
}

const transactions = new Map<number, Open>();
let stopMaintenance: (() => void) | undefined;

function begin(db: PGlite, id: number): Promise<void> {
  return new Promise((started, failed) => {
    let finish!: (commit: boolean) => void;
    const done = db.transaction(
      (tx) =>
        new Promise<void>((resolve, reject) => {
          finish = (commit) => (commit ? resolve() : reject(ROLLBACK));
          transactions.set(id, { tx, finish, done });
          started();
        }),
    );
    done.catch(() => {}).finally(() => transactions.delete(id));
    done.catch(failed); // BEGIN itself failed: the callback never ran
  });
}

async function end(id: number, commit: boolean): Promise<void> {
  const open = transactions.get(id);
  if (!open) throw new Error(`No open transaction ${id}`);
  open.finish(commit);
  await open.done.catch((error) => {
    if (error !== ROLLBACK) throw error;
  });
}

async function serve(db: PGlite, request: WorkerRequest): Promise<unknown> {
  const on = (tx?: number) => {
    if (tx === undefined) return db;
    const open = transactions.get(tx);
    if (!open) throw new Error(`No open transaction ${tx}`);
    return open.tx;
  };
  switch (request.op) {
    case 'query': {
      const r = await on(request.tx).query(request.sql!, request.params ?? []);
      return { rows: r.rows, rowCount: r.rowCount ?? r.affectedRows ?? r.rows.length };
    }
    case 'exec':
      await on(request.tx).exec(request.sql!);
      return undefined;
    case 'begin':
      return begin(db, request.id);
    case 'commit':
      return end(request.tx!, true);
    case 'rollback':
      return end(request.tx!, false);
    case 'close': {
      stopMaintenance?.();
      // A transaction still open (a request cut after the shutdown grace, whose next statements the
      // main thread now refuses) would never end, and db.close() would wait on it forever.
      const open = [...transactions.values()];
      for (const t of open) t.finish(false);
      await Promise.allSettled(open.map((t) => t.done));
      return db.close(); // then the main thread terminates this one
    }
  }
}

/**
 * Opens PGlite with this thread's event loop kept alive. While PGlite opens, nothing of it holds
 * the loop (its steps are promises and synchronous WebAssembly), and a Node thread whose loop has
 * nothing left blocks in `NodePlatform::DrainTasks` until V8's background jobs are done: here, the
 * optimizing compiles of PGlite's WebAssembly that its start set off. The first statement after
 * the open then waited ~250-350 ms behind them, every first start of a process (seen in gdb, the
 * thread in `DrainTasks` and V8's threads in `ExecuteTurbofanWasmCompilation`; bench/RESULTS.md,
 * "Sandbox in a test suite"). A ref'd timer keeps the loop running while they finish beside it.
 */
async function openKeepingLoopAlive(): Promise<PGlite> {
  const alive = setInterval(() => {}, 60_000);
  try {
    return await open();
  } finally {
    clearInterval(alive);
  }
}

try {
  const db = await openKeepingLoopAlive();
  stopMaintenance = startMaintenance(db, maintenance, (change) => port.postMessage({ notice: 'maintenance', change } satisfies WorkerNotice));
  port.on('message', (request: WorkerRequest) => {
    serve(db, request).then(
      (result) => port.postMessage({ id: request.id, ok: true, result } satisfies WorkerReply),
      (error) => port.postMessage({ id: request.id, ok: false, error: describe(error) } satisfies WorkerReply),
    );
  });
  port.postMessage({ id: 0, ok: true } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ id: 0, ok: false, error: describe(error) } satisfies WorkerReply);
  port.close();
}
