// PGlite's bundle and the snapshot, held once per process in shared memory
// (server/store/shared-bytes.ts): each PGlite thread gets a copy of its own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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
});
