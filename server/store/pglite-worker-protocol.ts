// The messages between the main thread (pglite-worker-store.ts) and the thread that owns PGlite
// (pglite-worker.ts). Types only.

import type { MaintenanceChange, MaintenanceTimings } from './pglite-maintenance.ts';

export interface WorkerData {
  /** PGlite data directory; absent or `memory://` means in memory. */
  dataDir?: string | undefined;
  /** When the thread checkpoints and vacuums (pglite-maintenance.ts); its defaults otherwise. */
  maintenance?: MaintenanceTimings | undefined;
}

/**
 * The first message the thread receives, posted right after it is spawned (the thread starts, and
 * loads PGlite's JavaScript, while the main thread reads and compiles what this carries). The thread
 * opens PGlite once it has it.
 */
export interface WorkerOpen {
  /** An uncompressed tar of a data directory to start from (pglite-snapshot.ts): in memory, or a directory with no cluster yet. */
  snapshot?: SharedArrayBuffer;
  /** PGlite's engine, compiled once by the main thread (PGlite's own options). */
  pgliteWasmModule?: WebAssembly.Module;
  initdbWasmModule?: WebAssembly.Module;
  /** PGlite's file-system bundle (pglite.data), read once by the main thread; shared-bytes.ts says why not a Blob. */
  fsBundle?: SharedArrayBuffer;
}

export interface WorkerRequest {
  /** Unique per store; a `begin`'s id is its transaction's id. */
  id: number;
  op: 'query' | 'exec' | 'begin' | 'commit' | 'rollback' | 'close';
  sql?: string;
  params?: unknown[];
  /** The open transaction the statement belongs to (query, exec), or ends (commit, rollback). */
  tx?: number;
}

/** The fields of a PostgreSQL error the code and the logs use: never its values. */
export interface WorkerError {
  message: string;
  code?: string;
  severity?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
  hint?: string;
  position?: string;
  routine?: string;
  /** The SQL text (PGlite attaches it; its parameters stay in the worker). */
  query?: string;
}

/** The answer to request `id`; id 0 says the store is open (or could not open). */
export type WorkerReply = { id: number; ok: true; result?: unknown } | { id: number; ok: false; error: WorkerError };

/** Told by the thread on its own, outside any call: its maintenance failed, or works again (pglite-maintenance.ts). */
export interface WorkerNotice {
  notice: 'maintenance';
  change: MaintenanceChange;
}
