// Opening the store: PostgreSQL when a URL is given, embedded PGlite otherwise, with the key that
// seals secrets at rest. Apart from store.ts (the interface), so that the two drivers, which
// implement that interface, and the factory, which imports them, form no import cycle.
import { resolveEncryptionKey } from './encryption-key.ts';
import { openPgliteWorkerStore } from './pglite-worker-store.ts';
import { sealedSecrets, type SealedSecrets } from './sealed-secrets.ts';
import type { Store } from './store.ts';

export interface StoreOptions {
  /** A PostgreSQL connection string; when set, PGlite is not used. */
  databaseUrl?: string;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string;
  /** SANDBOX_ENCRYPTION_KEY; absent means the rule of encryption-key.ts. */
  encryptionKey?: string;
  /**
   * PGlite in memory starts from a dumped data directory when there is a usable one
   * (pglite-snapshot.ts): true, the package's migrated one; a path, that file.
   */
  pgliteSnapshot?: boolean | string;
  /** Told when PGlite's worker thread stops unexpectedly (every store call fails from then on). */
  onFailure?: (error: Error) => void;
}

/**
 * PostgreSQL when a URL is given (its driver imported only then), PGlite (on a worker thread,
 * pglite-worker-store.ts) otherwise.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const atRest = sealedSecrets(await resolveEncryptionKey(options)); // a bad key fails before connecting
    return withSealedSecrets(await (await import('./postgres-store.ts')).openPostgresStore(options.databaseUrl), atRest);
  }
  // PGlite's thread is spawned in this very call, before anything is awaited, so that it boots while
  // the caller goes on (the sandbox loads its app meanwhile); a key that does not resolve closes it.
  const opening = openPgliteWorkerStore(options.dataDir, { snapshot: options.pgliteSnapshot, onFailure: options.onFailure });
  let atRest: SealedSecrets;
  try {
    atRest = sealedSecrets(await resolveEncryptionKey(options));
  } catch (error) {
    await opening.then((store) => store.close(), () => undefined);
    throw error;
  }
  return withSealedSecrets(await opening, atRest);
}

function withSealedSecrets(store: Store, atRest: SealedSecrets): Store {
  return { ...store, atRest, transaction: (fn) => store.transaction((tx) => fn({ ...tx, atRest })) };
}

