// An in-memory PGlite sandbox starts from a data directory made at build time, not from nothing:
// initdb inside WebAssembly and the migrations took most of `startSandbox({ storage: 'memory' })`
// (7-12 s under load here, ~3 s on an idle core), loading a dumped data directory takes a fraction
// of it. `npm run build` (the sandbox package's build, so `make build-server` too) writes
// dist/pglite-snapshot.tar: a cluster initialised by this PGlite, every migration applied, no
// rows (nothing sealed, so no encryption key is in it). At start `migrate` still runs on it: a
// snapshot older than the migrations gets the missing ones. Without the file, or when it was made by
// another PGlite build (its engine files differ), or when it does not load, the store starts as
// before, from initdb.
//
// The tar is not compressed: uncompressing it (gzip, 1.4 MB to 10 MB) took ~100 ms of the main
// thread at each process's first start, before PGlite's thread could have it. npm compresses the
// package's tarball as a whole, so the download grows ~0.1 MB; installed, it takes ~9 MB more.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../package-root.ts';
import { readShared } from './shared-bytes.ts';
import { isWholeSnapshot } from './snapshot-tar.ts';

/** Where the build writes the snapshot, and where a start looks for it. */
export const PGLITE_SNAPSHOT_FILE = join(PACKAGE_ROOT, 'dist', 'pglite-snapshot.tar');

/**
 * Which PGlite build a snapshot belongs to: the sizes of its engine (pglite.wasm) and file system
 * bundle (pglite.data). Another PostgreSQL or PGlite version has other files; a data directory is
 * only loaded by the build that wrote it.
 */
export function engineIdentity(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const dir = dirname(entry.startsWith('file:') ? fileURLToPath(entry) : entry);
  return ['pglite.wasm', 'pglite.data'].map((f) => statSync(join(dir, f)).size).join('-');
}

/** The snapshot file's sidecar: the engine it was made by and the migrations in it. */
export const manifestOf = (file: string) => file.replace(/\.tar$/, '') + '.json';

export interface Manifest {
  engine: string;
  migrations: string[];
}

/**
 * Read once per process and per file: every later in-memory start reuses the tar
 * (~10 MB). A file found absent or unusable is looked for again at the next start (a build may
 * write it). Two files at most are kept, the last ones read: a process uses one (the package's),
 * a test run one more of its own.
 */
const loaded = new Map<string, SharedArrayBuffer>();
const KEPT = 2;

/**
 * The snapshot (a tar), or undefined when there is none usable for this PGlite (none, another
 * PGlite build's, or not whole: snapshot-tar.ts's isWholeSnapshot). Synchronous, once per file
 * (read in ~10-70 ms, checked whole in ~4-35 ms): the store reads it right after spawning PGlite's
 * thread, which boots meanwhile (pglite-worker-store.ts).
 */
export function pgliteSnapshot(file = PGLITE_SNAPSHOT_FILE): SharedArrayBuffer | undefined {
  let snapshot = loaded.get(file);
  if (!snapshot) {
    snapshot = read(file);
    if (snapshot) {
      loaded.set(file, snapshot);
      if (loaded.size > KEPT) loaded.delete(loaded.keys().next().value!);
    }
  }
  return snapshot;
}

function read(file: string): SharedArrayBuffer | undefined {
  try {
    if (!existsSync(file) || !existsSync(manifestOf(file))) return undefined;
    const manifest = JSON.parse(readFileSync(manifestOf(file), 'utf8')) as Manifest;
    if (manifest.engine !== engineIdentity()) return undefined;
    const tar = readShared(file);
    // One cut short is not kept, and is read again at the next start.
    return isWholeSnapshot(new Uint8Array(tar)) ? tar : undefined;
  } catch {
    return undefined;
  }
}
