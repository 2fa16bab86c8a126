// A start that fails after the store opened (here its migrations: the data directory holds a table
// the first migration creates) rejects with the reason and closes that store: no PGlite thread is
// left running in the process of the suite that called startSandbox. A port in use refuses the
// start in the sandbox's words before any store, data directory or key file is made. openStore is wrapped to see
// the store the sandbox opened, so this file runs isolated (vitest.config.ts).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, expect, it, vi } from 'vitest';
import type { PgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { encryptionKeyFileOf } from '../../server/store/encryption-key.ts';
import { startSandbox } from '../../server/index.ts';

const opened = vi.hoisted(() => [] as unknown[]);
const openCalls = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../server/store/open-store.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/store/open-store.ts')>();
  return {
    ...actual,
    openStore: async (...args: Parameters<typeof actual.openStore>) => {
      openCalls.count += 1;
      const store = await actual.openStore(...args);
      opened.push(store);
      return store;
    },
  };
});

let dataDir: string;
afterAll(() => Promise.all([rm(dataDir, { recursive: true, force: true }), rm(encryptionKeyFileOf(dataDir), { force: true })]));

it('rejects when the migrations fail, and closes the store it opened', async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sandbox-start-failure-'));
  const db = await PGlite.create({ dataDir });
  await db.exec('CREATE TABLE sellers (unrelated int)'); // migration 001 creates `sellers`
  await db.close();

  await expect(startSandbox({ storage: 'disk', dataDir })).rejects.toThrow(/relation "sellers" already exists/);
  expect(opened).toHaveLength(1);
  const { thread } = opened[0] as PgliteWorkerStore;
  // Closed: the thread has exited (threadId becomes -1 once it has), and the store refuses calls.
  await vi.waitFor(() => expect(thread.threadId).toBe(-1), { timeout: 5_000 });
  await expect((opened[0] as PgliteWorkerStore).query('SELECT 1')).rejects.toThrow(/closed/);
});

it('refuses a port in use in its own words, before it makes a data directory or a key file', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  const unused = join(await mkdtemp(join(tmpdir(), 'sandbox-port-in-use-')), 'pglite');
  try {
    const before = openCalls.count;
    const failure = await startSandbox({ port, storage: 'disk', dataDir: unused }).then(
      () => undefined,
      (error: Error & { code?: string; cause?: unknown }) => error,
    );
    expect(failure?.message).toBe(
      `The port ${port} of 127.0.0.1 is in use (another sandbox, or another program): stop it, or give another port (0 picks a free one)`,
    );
    expect(failure?.code).toBe('EADDRINUSE'); // still there for programs that test it
    expect((failure?.cause as Error | undefined)?.message).toMatch(/EADDRINUSE/);
    expect(openCalls.count).toBe(before); // no store was even started
    expect(existsSync(unused)).toBe(false);
    expect(existsSync(encryptionKeyFileOf(unused))).toBe(false);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
    await rm(join(unused, '..'), { recursive: true, force: true });
  }
});

it('refuses a host name that does not resolve in its own words, before it makes a store', async () => {
  const before = openCalls.count;
  const failure = await startSandbox({ host: 'no-such-host.invalid', port: 0, env: { SANDBOX_ADMIN_TOKEN: 'an-admin-token-of-its-own' } }).then(
    () => undefined,
    (error: Error & { code?: string }) => error,
  );
  // ENOTFOUND; EAI_AGAIN where no name server answers.
  expect(failure?.message).toMatch(
    /^The host name no-such-host\.invalid does not resolve( \(no answer from the name server\))?: give an address of this machine as the host \(127\.0\.0\.1 by default\)$/,
  );
  expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(failure?.code);
  expect(openCalls.count).toBe(before);
});
