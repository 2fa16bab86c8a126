// Large read-only inputs of PGlite (its file-system bundle, the snapshot) held once per process in
// shared memory, and handed to each PGlite thread as a Blob-like object with its own copy.
//
// Why not a Blob: a Blob also crosses threads without a copy, but Node 20's `Blob.arrayBuffer()`
// reads it in chunks and then concatenates them, ~125 ms of the PGlite thread's CPU for the
// bundle's 6 MB and the snapshot's 10 MB at every open (a CPU profile of a first start:
// `readNext` and `concat` in node:internal/blob). A copy out of a SharedArrayBuffer took ~6 ms on
// an idle machine, 40-100 ms with both CPUs busy (the new buffer's pages faulted in one by one);
// bench/RESULTS.md, "Sandbox in a test suite".
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** A file read straight into shared memory. */
export function readShared(file: string): SharedArrayBuffer {
  const fd = openSync(file, 'r');
  try {
    const memory = new SharedArrayBuffer(fstatSync(fd).size);
    const view = new Uint8Array(memory);
    for (let at = 0; at < view.byteLength; ) {
      const read = readSync(fd, view, at, view.byteLength - at, at);
      if (read === 0) throw new Error(`${file} ended at byte ${at} of ${view.byteLength}`);
      at += read;
    }
    return memory;
  } finally {
    closeSync(fd);
  }
}

/**
 * What PGlite reads of the Blobs it is given (`fsBundle`, `loadDataDir`): `arrayBuffer()`, which
 * it then unpacks, and `type` (a gzip type is uncompressed first); `size` for completeness.
 *
 * Each call answers a copy of its own, so that nothing PGlite does to its buffer can reach another
 * sandbox's: the file-system bundle goes to Emscripten's file packager, whose files keep views of
 * the buffer they came in and are written in place. Tried and not kept: the snapshot's shared
 * memory itself, which PGlite only reads. It saved nothing: PGlite's untar (tinytar) copies
 * whatever is not a plain ArrayBuffer into one first (an outside review, 2026-11-25).
 */
export function blobOf(memory: SharedArrayBuffer, type = ''): Blob {
  const like = {
    size: memory.byteLength,
    type,
    arrayBuffer: async (): Promise<ArrayBuffer> => new Uint8Array(memory).slice().buffer,
  };
  return like as unknown as Blob;
}
