// PGlite's bundle and the snapshot, held once per process in shared memory
// (server/store/shared-bytes.ts): each PGlite thread gets a copy of its own.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { manifestOf, pgliteSnapshot } from '../../server/store/pglite-snapshot.ts';
import { openPgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { blobOf, readShared } from '../../server/store/shared-bytes.ts';

let dir: string | undefined;
afterAll(() => dir && rm(dir, { recursive: true, force: true }));

describe('shared bytes', () => {
  it('reads a file whole into shared memory', async () => {
    dir = await mkdtemp(join(tmpdir(), 'shared-bytes-'));
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    await writeFile(join(dir, 'file'), bytes);
    const memory = readShared(join(dir, 'file'));
    expect(memory).toBeInstanceOf(SharedArrayBuffer);
    expect(Buffer.from(memory).equals(bytes)).toBe(true);
    await writeFile(join(dir, 'empty'), '');
    expect(readShared(join(dir, 'empty')).byteLength).toBe(0);
    expect(() => readShared(join(dir!, 'absent'))).toThrow(/ENOENT/);
  });

  it("answers PGlite a copy of its own at each arrayBuffer(): what one thread's PGlite does to it never reaches the shared bytes", async () => {
    const memory = new SharedArrayBuffer(4);
    new Uint8Array(memory).set([1, 2, 3, 4]);
    const blob = blobOf(memory, 'application/x-tar');
    expect(blob.type).toBe('application/x-tar');
    expect(blob.size).toBe(4);
    const first = await blob.arrayBuffer();
    expect(first).toBeInstanceOf(ArrayBuffer); // not the SharedArrayBuffer
    new Uint8Array(first).fill(9);
    expect([...new Uint8Array(memory)]).toEqual([1, 2, 3, 4]);
    const second = await blob.arrayBuffer();
    expect(second).not.toBe(first);
    expect([...new Uint8Array(second)]).toEqual([1, 2, 3, 4]);
  });

  it("leaves the process's snapshot as it was after a sandbox started from it wrote and checkpointed", async () => {
    dir ??= await mkdtemp(join(tmpdir(), 'shared-bytes-'));
    const file = join(dir, 'snapshot.tar');
    const made = inject('pgliteMigratedSnapshot');
    await Promise.all([copyFile(made, file), copyFile(manifestOf(made), manifestOf(file))]);
    const onDisk = await readFile(file);
    const store = await openPgliteWorkerStore(undefined, { snapshot: file });
    try {
      await store.exec("CREATE TABLE written (x text); INSERT INTO written SELECT repeat('x', 1000) FROM generate_series(1, 2000); CHECKPOINT");
      expect((await store.query<{ n: number }>('SELECT count(*)::int AS n FROM written')).rows).toEqual([{ n: 2000 }]);
    } finally {
      await store.close();
    }
    expect(Buffer.from(pgliteSnapshot(file)!).equals(onDisk)).toBe(true);
    const next = await openPgliteWorkerStore(undefined, { snapshot: file }); // and the next sandbox starts without that table
    try {
      expect((await next.query("SELECT to_regclass('written') AS t")).rows).toEqual([{ t: null }]);
    } finally {
      await next.close();
    }
  });
});
