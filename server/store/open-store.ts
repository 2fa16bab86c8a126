// Opening the store: PostgreSQL when a URL is given, embedded PGlite otherwise, with the key that
// seals secrets at rest. Apart from store.ts (the interface), so that the two drivers, which
// implement that interface, and the factory, which imports them, form no import cycle.
import { EventEmitter } from 'node:events';
import { checkDataDirectory, holdsCluster, isOnDisk, type MadePrivate } from './data-directory.ts';
import { existingEncryptionKey, parsePreviousEncryptionKey, resolveEncryptionKey, type ResolvedKey } from './encryption-key.ts';
import { openPgliteWorkerStore, type PgliteWorkerOptions } from './pglite-worker-store.ts';
import { sealedSecrets, type SealedSecrets } from './sealed-secrets.ts';
import type { OnListenChange } from './postgres-announcements.ts';
import type { ReachChange } from './postgres-store.ts';
import type { Store, StoreTopic } from './store.ts';

export interface StoreOptions {
  /** A PostgreSQL connection string; when set, PGlite is not used. */
  databaseUrl?: string;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string;
  /** SANDBOX_ENCRYPTION_KEY; absent means the rule of encryption-key.ts. */
  encryptionKey?: string;
  /** SANDBOX_PREVIOUS_ENCRYPTION_KEY: the key (or the URL it was derived from) secrets were sealed with before; they still open with it. */
  previousEncryptionKey?: string;
  /** Told the row of each secret opened with the previous key (sealed-secrets.ts). */
  onPreviousKeyUsed?: (context: string) => void;
  /**
   * PGlite in memory, or on a data directory with no cluster yet, starts from a dumped data
   * directory when there is a usable one (pglite-snapshot.ts): true, the package's migrated one; a
   * path, that file.
   */
  pgliteSnapshot?: boolean | string;
  /** Told when PGlite's worker thread stops unexpectedly (every store call fails from then on). */
  onFailure?: (error: Error) => void;
  /** Told when PGlite's checkpoints and vacuums fail (once), and when they work again (pglite-maintenance.ts). */
  onMaintenance?: PgliteWorkerOptions['onMaintenance'];
  /** Told when an existing PGlite data directory that other users could reach was made private (data-directory.ts). */
  onMadePrivate?: (change: MadePrivate) => void;
  /** Told when the start waits for the lock a PGlite sandbox that is gone left on the data directory (data-directory-lock.ts). */
  onWaitingForLock?: PgliteWorkerOptions['onWaitingForLock'];
  /** Told, on PostgreSQL, when the connection that hears the other instances is lost or refused (it is opened again), and when it listens again. */
  onOtherInstancesListening?: OnListenChange;
  /** Told, on PostgreSQL, when the server cannot be reached (once per outage: the calls meanwhile throw StoreUnavailable), and when it answers again. */
  onReachChange?: (change: ReachChange) => void;
}

/**
 * PostgreSQL when a URL is given (its driver imported only then), PGlite (on a worker thread,
 * pglite-worker-store.ts) otherwise. A key that does not resolve fails before anything is opened.
 * In memory, or with SANDBOX_ENCRYPTION_KEY, resolving it reads no file, so PGlite's thread is
 * spawned in a microtask of this call: before the caller's next I/O, and so before the sandbox's
 * app modules, which it imports next, start to load (the thread boots meanwhile).
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  // A data directory refused gets no key file beside it; a key refused, no data directory (PGlite's
  // store makes it, or makes it private, once the key is resolved).
  if (!options.databaseUrl && isOnDisk(options.dataDir)) checkDataDirectory(options.dataDir);
  const previous = options.previousEncryptionKey ? parsePreviousEncryptionKey(options.previousEncryptionKey) : undefined;
  const existing = await existingEncryptionKey(options);
  // A missing key file is made only once the data directory is locked: a start the lock refuses
  // (another sandbox runs on it) leaves none in its place, which that sandbox's next start would read.
  let resolved: ResolvedKey | undefined = existing && { key: existing };
  let heldCluster = false;
  const makeKeyFile = async () => {
    heldCluster = holdsCluster(options.dataDir);
    resolved = await resolveEncryptionKey(options);
  };
  const store = options.databaseUrl
    ? (await import('./postgres-store.ts')).openPostgresStore(options.databaseUrl, { onListenChange: options.onOtherInstancesListening, onReachChange: options.onReachChange })
    : openPgliteWorkerStore(options.dataDir, {
        snapshot: options.pgliteSnapshot,
        onFailure: options.onFailure,
        onMaintenance: options.onMaintenance,
        onMadePrivate: options.onMadePrivate,
        onWaitingForLock: options.onWaitingForLock,
        underLock: resolved ? undefined : makeKeyFile,
      });
  const opened = await store;
  const { key, madeFile } = resolved!;
  const withSecrets = withSecretsAndAnnouncements(opened, sealedSecrets(key, previous, options.onPreviousKeyUsed));
  if (!options.databaseUrl && !isOnDisk(options.dataDir)) return { ...withSecrets, inMemory: true };
  return heldCluster && madeFile ? { ...withSecrets, madeKeyFile: madeFile } : withSecrets;
}

/**
 * The store with its key for secrets at rest, and its announcements (Queryable.announce), on its
 * transactions too: its own listeners are told at once, the other instances through the driver.
 */
function withSecretsAndAnnouncements(store: Store, atRest: SealedSecrets): Store {
  const announcements = new EventEmitter().setMaxListeners(0);
  // Each listener is told; one that throws is skipped: what was announced has committed, and its
  // transaction (a payment) must not answer as if it had failed.
  const tell = (topic: StoreTopic) => {
    for (const listener of announcements.listeners(topic) as Array<() => void>) {
      try {
        listener();
      } catch {
        // a listener's own failure (it has no logger here); the others are still told
      }
    }
  };
  const announce = (topic: StoreTopic) => {
    tell(topic);
    store.otherInstances?.publish(topic);
  };
  return {
    ...store,
    atRest,
    announce,
    async transaction(fn) {
      const announced = new Set<StoreTopic>();
      const result = await store.transaction((tx) => fn({ ...tx, atRest, announce: (topic) => void announced.add(topic) }));
      for (const topic of announced) announce(topic);
      return result;
    },
    onAnnounced(topic, listener) {
      store.otherInstances?.listen(tell); // from the first listener on
      announcements.on(topic, listener);
      return () => void announcements.off(topic, listener);
    },
  };
}

