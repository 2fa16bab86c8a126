// A start that fails after the store opened (here its migrations: the data directory holds a table
// the first migration creates) rejects with the reason and closes that store: no PGlite thread is
// left running in the process of the suite that called startSandbox. openStore is wrapped to see
// the store the sandbox opened, so this file runs isolated (vitest.config.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, expect, it, vi } from 'vitest';
import type { PgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { encryptionKeyFileOf } from '../../server/store/encryption-key.ts';
import { startSandbox } from '../../server/index.ts';

const opened = vi.hoisted(() => [] as unknown[]);
vi.mock('../../server/store/open-store.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/store/open-store.ts')>();
  return {
    ...actual,
    openStore: async (...args: Parameters<typeof actual.openStore>) => {
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
