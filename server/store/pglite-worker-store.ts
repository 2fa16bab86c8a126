// Embedded PostgreSQL (PGlite) on a worker thread of its own (pglite-worker.ts, which says why and
// speaks the protocol of pglite-worker-protocol.ts): this side is the Store the server uses, every
// call a message with an id and a promise. PGlite is still one connection: concurrent transactions
// and the statements outside them wait their turn behind its transaction lock, in the worker.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { lockDataDirectory, type DataDirectoryLock, type LockOptions } from './data-directory-lock.ts';
import { holdsCluster, isOnDisk, privateDataDirectory, type MadePrivate } from './data-directory.ts';
import type { MaintenanceChange, MaintenanceTimings } from './pglite-maintenance.ts';
import { pgliteSnapshot } from './pglite-snapshot.ts';
import { workerFromSources } from './pglite-worker-from-sources.ts';
import type { WorkerData, WorkerError, WorkerNotice, WorkerOpen, WorkerReply, WorkerRequest } from './pglite-worker-protocol.ts';
import { readShared } from './shared-bytes.ts';
import { rethrowWithoutValues, StoreUnavailable, withoutQuotedValues, type QueryResult, type Queryable, type Store } from './store.ts';

/** Next to this module: pglite-worker.ts from the sources (tsx, vitest), pglite-worker.js from the build. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_ENTRY = new URL(FROM_SOURCES ? './pglite-worker.ts' : './pglite-worker.js', import.meta.url);

/**
 * The PGlite thread's young generation: 16 MB instead of V8's default 48 (3 x 16 MB semi-spaces).
 * Its garbage is short-lived (each message's rows); under bench/server.ts's load the process peaked
 * ~17 MiB lower with the same throughput (6 MB: ~35 MiB lower, but ~10% fewer requests per second).
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16 };

/**
 * The process's Node options minus `--input-type`, which a worker inherits but refuses for a file
 * entry (ERR_INPUT_TYPE_NOT_ALLOWED): a sandbox started from `node --input-type=module -e ...`
 * (bench/sandbox.ts's children) lost its PGlite thread at once.
 */
function workerExecArgv(): string[] {
  const args: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i]!;
    if (arg === '--input-type') i++;
    else if (!arg.startsWith('--input-type=')) args.push(arg);
  }
  return args;
}

/**
 * A worker thread runs plain Node: from the sources (tsx, vitest) it starts from the entry bundled
 * into plain JavaScript (pglite-worker-from-sources.ts); the published package runs the compiled .js.
 *
 * Node refuses a worker's explicit execArgv that holds an option a thread cannot have (V8's and
 * the process's own, `--no-wasm-tier-up`, `--title`: ERR_WORKER_INVALID_EXEC_ARGV), which a
 * process started with one would pass on: those it names are left out, and the thread keeps the
 * parent's other options (`--conditions`, `--enable-source-maps`, ...); V8's apply to the whole
 * process anyway.
 */
function spawnWorker(workerData: WorkerData): Worker {
  const options = { workerData, resourceLimits: WORKER_LIMITS };
  const spawn = (execArgv: string[]) => {
    return new Worker(FROM_SOURCES ? workerFromSources(WORKER_ENTRY) : WORKER_ENTRY, { ...options, execArgv });
  };
  let execArgv = workerExecArgv();
  for (;;) {
    try {
      return spawn(execArgv);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || execArgv.length === 0) throw error;
      const kept = withoutRefused(execArgv, (error as Error).message);
      execArgv = kept.length < execArgv.length ? kept : []; // nothing recognised: none of the parent's options
    }
  }
}

/** How long close() waits for PGlite to close before it stops its thread anyway. */
const CLOSE_DEADLINE_MS = 10_000;

/**
 * `execArgv` without the options Node's message names ("Initiated Worker with invalid execArgv
 * flags: --a, --b"), in either spelling (`--title=x`, or `--title x`).
 */
export function withoutRefused(execArgv: readonly string[], message: string): string[] {
  const refused = new Set(message.slice(message.lastIndexOf(': ') + 2).split(', ').map((flag) => flag.trim()));
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    const name = arg.split('=', 1)[0]!;
    if (!refused.has(name) && !refused.has(arg)) kept.push(arg);
    else if (!arg.includes('=') && execArgv[i + 1] !== undefined && !execArgv[i + 1]!.startsWith('-')) i++; // its value
  }
  return kept;
}

type Engine = Pick<WorkerOpen, 'pgliteWasmModule' | 'initdbWasmModule' | 'fsBundle'>;

/**
 * PGlite's engine, compiled once per process and handed to every worker (a WebAssembly.Module and
 * a SharedArrayBuffer cross threads without a copy): a worker of its own would compile ~9 MB of WebAssembly
 * again at each open, ~1-2 s of CPU for each sandbox a test suite starts. Read and compiled
 * synchronously (~110 ms, once), right after the first worker is spawned: its thread boots meanwhile.
 * Tried and not kept: reading and compiling asynchronously, the snapshot too (libuv's pool, V8's
 * threads), to leave the main thread to the sandbox's modules. The first start took ~300 ms longer:
 * the answers waited for the main thread, busy with the modules' synchronous loading, so the
 * thread got what it opens with later (bench/RESULTS.md, "Sandbox in a test suite").
 */
let engine: Engine | undefined;
function compiledEngine(): Engine {
  if (engine) return engine;
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    const dir = dirname(entry.startsWith('file:') ? fileURLToPath(entry) : entry);
    const compile = (file: string) => new WebAssembly.Module(readFileSync(join(dir, file)));
    engine = { pgliteWasmModule: compile('pglite.wasm'), initdbWasmModule: compile('initdb.wasm'), fsBundle: readShared(join(dir, 'pglite.data')) };
    return engine;
  } catch {
    return {}; // PGlite finds its files itself; the next open tries again
  }
}

export interface PgliteWorkerOptions {
  /** When PGlite's thread checkpoints and vacuums (pglite-maintenance.ts); tests shorten them. */
  maintenance?: MaintenanceTimings;
  /** true: the package's snapshot; a path: that file (pglite-snapshot.ts). In memory, or for a data directory with no cluster yet. */
  snapshot?: boolean | string;
  /** Told once when the worker thread stops unexpectedly (every call rejects from then on). */
  onFailure?: (error: Error) => void;
  /** Told when PGlite's checkpoints and vacuums fail (once), and when they work again (pglite-maintenance.ts). */
  onMaintenance?: (change: MaintenanceChange) => void;
  /** Told when an existing data directory that other users could reach was made private (data-directory.ts). */
  onMadePrivate?: (change: MadePrivate) => void;
  /** Told when the start waits for the lock of a sandbox that is gone to go stale (data-directory-lock.ts). */
  onWaitingForLock?: LockOptions['onWaiting'];
  /** Run once a data directory is locked, before PGlite's thread starts (open-store.ts makes a missing key file there); a rejection releases the lock. */
  underLock?: () => Promise<void>;
}

export interface PgliteWorkerStore extends Store {
  /** The thread that runs PGlite (tests stop it to check that calls fail rather than hang). */
  readonly thread: Worker;
  /** Stops the thread at once, without letting PGlite write anything more: every call fails with `error` from then on. */
  abort(error: Error): void;
}

/** An Error with the PostgreSQL fields the code and the logs use, without any value (store.ts). */
function rebuilt(fields: WorkerError): Error {
  const { message, ...rest } = fields;
  return Object.assign(new Error(message), rest);
}

/**
 * PGlite in a worker thread: a data directory on disk, or memory (no `dataDir`, or `memory://`),
 * from the snapshot when `snapshot` is set, there is a usable one, and the store starts empty
 * (memory, or a directory with no cluster yet). Resolves once PGlite is open. A directory is made
 * private (data-directory.ts) and locked for this store until it closes (data-directory-lock.ts).
 */
export async function openPgliteWorkerStore(dataDir?: string, options: PgliteWorkerOptions = {}): Promise<PgliteWorkerStore> {
  if (!isOnDisk(dataDir)) return openUnlocked(dataDir, options);
  const change = privateDataDirectory(dataDir);
  if (change) options.onMadePrivate?.(change);
  // One sandbox per directory (data-directory-lock.ts), locked before it is read: a second one is
  // refused before its thread starts. A lock lost while held stops the store before it writes more.
  let store: PgliteWorkerStore | undefined;
  const lock: DataDirectoryLock = await lockDataDirectory(dataDir, { onLost: (error) => store?.abort(error), onWaiting: options.onWaitingForLock });
  try {
    await options.underLock?.();
    store = await openUnlocked(dataDir, options, lock.refusal);
  } catch (error) {
    await lock.release();
    throw isPgliteRefusal(error) ? unopenable(dataDir, error as Error) : error;
  }
  const refused = lock.refusal(); // lost while PGlite opened
  if (refused) {
    store.abort(refused);
    await lock.release();
    throw refused;
  }
  const close = store.close;
  return Object.assign(store, { close: () => close().finally(() => lock.release()) });
}

/**
 * PGlite's own refusal of a cluster on disk (`Aborted(). Build with -sASSERTIONS for more info.`,
 * `PGlite failed to initialize properly`) says neither which directory nor what to do.
 */
const isPgliteRefusal = (error: unknown) => error instanceof Error && /^(Aborted\(|PGlite failed to initialize)/.test(error.message.trim());

function unopenable(dataDir: string, error: Error): Error {
  return new Error(
    `PGlite could not open the database in ${dataDir} (${error.message.trim()}): its files are damaged (a disk full or a copy cut short), ` +
      'or some are not readable and writable by this user (a start with sudo leaves files owned by root: check their owner and permissions). ' +
      'Start on a new data directory, or put back a copy of this one',
    { cause: error },
  );
}

/** `refusal`: asked before every call whether the store may still reach its directory (a lock held: DataDirectoryLock). */
async function openUnlocked(dataDir: string | undefined, options: PgliteWorkerOptions, refusal?: () => Error | undefined): Promise<PgliteWorkerStore> {
  const file = typeof options.snapshot === 'string' ? options.snapshot : undefined;
  const fromSnapshot = startsEmpty(dataDir) && options.snapshot;
  // Read once per process (pglite-snapshot.ts); shared memory crosses to the worker without a copy.
  const snapshot = () => (fromSnapshot ? pgliteSnapshot(file) : undefined);
  // The first thread is spawned before anything is read (synchronously, in this call), the second
  // only when the first could not load the snapshot: it starts from initdb, as without one. The
  // worker retries itself when PGlite rejects the snapshot, and a new worker starts when loading it
  // took its thread down (a corrupt archive fails inside PGlite's decompression, out of reach of any catch).
  let sentSnapshot = false;
  const data: WorkerData = { dataDir, maintenance: options.maintenance };
  const first = startWorkerStore(data, () => {
    const from = snapshot();
    sentSnapshot = from !== undefined;
    return { ...compiledEngine(), snapshot: from };
  }, options, refusal);
  const opened = await first.catch((error: unknown) => (sentSnapshot ? undefined : Promise.reject(error)));
  return opened ?? startWorkerStore(data, compiledEngine, options, refusal);
}

/**
 * Memory, or a data directory on disk with no cluster yet (no PG_VERSION: absent, or empty): such
 * a store can start from the snapshot, which PGlite then writes into the directory, instead of
 * running initdb in WebAssembly (a first `npx` start: ~3.5 s and ~800 MiB at its peak, for initdb).
 */
function startsEmpty(dataDir: string | undefined): boolean {
  return !holdsCluster(dataDir);
}

/**
 * Spawns the PGlite thread, then posts it what `prepare` gives (the engine, the snapshot): the
 * thread boots and loads PGlite's JavaScript while this one reads and compiles them.
 */
function startWorkerStore(
  data: WorkerData,
  prepare: () => WorkerOpen,
  told: Told,
  refusal?: () => Error | undefined,
): Promise<PgliteWorkerStore> {
  const thread = spawnWorker(data);
  try {
    thread.postMessage(prepare() satisfies WorkerOpen);
  } catch (error) {
    return thread.terminate().then(() => Promise.reject(error));
  }
  return workerStore(thread, told, refusal);
}

/** A maintenance notice without the values its PostgreSQL message may quote (an index expression's input, say). */
function withoutValues(change: MaintenanceChange): MaintenanceChange {
  return change.failed ? { ...change, error: { ...change.error, message: withoutQuotedValues(change.error.message) } } : change;
}

/** What the store tells its opener of the thread. */
type Told = Pick<PgliteWorkerOptions, 'onFailure' | 'onMaintenance'>;

async function workerStore(thread: Worker, told: Told, refusal?: () => Error | undefined): Promise<PgliteWorkerStore> {
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let stopped: Error | undefined; // set once the thread is gone: every call rejects with it
  let closing: Promise<void> | undefined;
  let opened = false;

  // The thread keeps the process alive only while a call waits on it, as an in-thread PGlite would.
  // Once it is stopping, it keeps it alive until it is gone (terminate() references it): an answer
  // read after that, to a call already refused (a lost lock stopping the thread mid-statement), must
  // not unreference it, or the process ended with the stop unfinished (a close() that never settled).
  const settle = (id: number) => {
    const call = pending.get(id);
    pending.delete(id);
    if (pending.size === 0 && !closing) thread.unref();
    return call;
  };
  const stop = (error: Error) => {
    if (stopped) return;
    // Said once (onFailure); each call refused from then on is not logged again with a stack.
    stopped = error instanceof StoreUnavailable ? error : new StoreUnavailable(error.message, { cause: error });
    for (const id of [...pending.keys()]) settle(id)!.reject(stopped);
    if (opened && !closing) told.onFailure?.(error);
  };

  thread.on('message', (reply: WorkerReply | WorkerNotice) => {
    if ('notice' in reply) return told.onMaintenance?.(withoutValues(reply.change));
    const call = settle(reply.id);
    if (reply.ok) call?.resolve(reply.result);
    else call?.reject(rebuilt(reply.error));
  });
  thread.on('error', (error) => stop(new Error(`The PGlite worker thread failed: ${error.message}; restart the sandbox`, { cause: error })));
  thread.on('exit', (code) =>
    stop(closing ? new Error('The store is closed') : new Error(`The PGlite worker thread stopped (exit code ${code}); restart the sandbox`)),
  );

  /** Stops the thread at once, without letting PGlite write anything more, a close under way included; told to onFailure, as any stop of an open store not closing. */
  const abort = (error: Error) => {
    stop(error);
    // During a close too: PGlite's own close would flush into the directory, which a lost lock forbids.
    const ended = thread.terminate().then(() => {});
    closing ??= ended;
  };
  /** True when the directory's lock says the store must not reach it any more (it is then aborted). */
  const refused = () => {
    const error = opened ? refusal?.() : undefined;
    if (error) abort(error);
    return error !== undefined;
  };

  const send = (request: Omit<WorkerRequest, 'id'>, id = nextId++): Promise<unknown> => {
    refused();
    if (stopped) return Promise.reject(stopped);
    if (closing) return Promise.reject(new Error('The store is closed'));
    return new Promise((resolve, reject) => {
      if (pending.size === 0) thread.ref();
      pending.set(id, { resolve, reject });
      try {
        thread.postMessage({ ...request, id } satisfies WorkerRequest);
      } catch (error) {
        settle(id);
        reject(error as Error); // a parameter that cannot be cloned (a function, a symbol)
      }
    });
  };

  // Open: the worker answers id 0 once PGlite is ready, or why it is not.
  thread.ref();
  await new Promise((resolve, reject) => pending.set(0, { resolve, reject })).catch(async (error: Error) => {
    closing = thread.terminate().then(() => {});
    await closing;
    throw error;
  });
  opened = true;

  const queryable = (tx?: number): Queryable => ({
    query: async <T>(sql: string, params: unknown[] = []) => (await send({ op: 'query', sql, params, tx }).catch(rethrowWithoutValues)) as QueryResult<T>,
    exec: async (sql: string) => {
      await send({ op: 'exec', sql, tx }).catch(rethrowWithoutValues);
    },
  });

  return {
    kind: 'pglite',
    thread,
    abort,
    ...queryable(),
    async transaction(fn) {
      const tx = nextId++;
      await send({ op: 'begin' }, tx).catch(rethrowWithoutValues);
      let value;
      try {
        value = await fn(queryable(tx));
      } catch (error) {
        await send({ op: 'rollback', tx }).catch(() => {}); // a stopped thread has nothing to roll back
        throw error;
      }
      await send({ op: 'commit', tx }).catch(rethrowWithoutValues);
      return value;
    },
    close() {
      if (closing || refused()) return closing!; // a store that lost its lock is not let to flush into the directory
      // PGlite closes once its open transactions are rolled back (pglite-worker.ts); should it still not
      // answer, the thread is stopped anyway after CLOSE_DEADLINE_MS, as a crash would (the WAL keeps
      // what was committed), so that a stop always ends.
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_DEADLINE_MS).unref());
      // Aborted meanwhile (its lock lost), it rejects with the abort's reason: whoever stops it hears it.
      const closed = stopped ? Promise.resolve() : Promise.race([send({ op: 'close' }), deadline]);
      closing = closed.finally(() => thread.terminate()).then(() => {}); // later calls are refused from here
      return closing;
    },
  };
}
