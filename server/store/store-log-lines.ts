// What the store tells the sandbox (open-store.ts's callbacks), as the sandbox's log lines: one
// place for their texts. runSandbox passes them all to openStore.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { isOnDisk, type MadePrivate } from './data-directory.ts';
import type { StoreOptions } from './open-store.ts';
import type { MaintenanceChange } from './pglite-maintenance.ts';
import type { ListenChange } from './postgres-announcements.ts';
import type { ReachChange } from './postgres-store.ts';

type LogLines = Required<Pick<StoreOptions, 'onFailure' | 'onMaintenance' | 'onMadePrivate' | 'onWaitingForLock' | 'onOtherInstancesListening' | 'onPreviousKeyUsed' | 'onReachChange'>>;

export function storeLogLines(logger: Logger): LogLines {
  // PGlite runs on a worker thread: if that thread dies, every request fails from then on; say why once.
  const onFailure = (error: Error) => logger.error({ err: error }, 'The store stopped: every request will fail until the sandbox restarts');
  const onMadePrivate = (change: MadePrivate) =>
    logger.warn(
      change,
      'The data directory was open to other users, who could read and change the database (PGlite writes its files readable and writable by everyone): group and others no longer reach it or its files. On a shared machine, start from a new data directory',
    );
  const onWaitingForLock = (wait: { dataDir: string; holderPid: number; waitMs: number }) =>
    logger.warn(wait, 'The data directory is still locked by a sandbox that is gone (killed before it could remove its lock): waiting for the lock to go stale');
  const onMaintenance = (change: MaintenanceChange) =>
    change.failed
      ? logger.warn(
          { statement: change.statement, error: change.error.message, code: change.error.code },
          "PGlite's maintenance failed (the checkpoints and vacuums a PostgreSQL server runs on its own): until it works again, the database's WAL and the space of its deleted rows grow (a checkpoint is tried again every 30 s, a vacuum five minutes after the last, once something was written)",
        )
      : logger.info({ failedPasses: change.failedPasses }, "PGlite's maintenance works again");
  // After the start's check, a secret only the previous key opens was written by an instance still
  // on the old key: said once per secret (at most 1,000), since every read of it opens it so.
  const warnedPrevious = new Set<string>();
  const onPreviousKeyUsed = (context: string) => {
    if (warnedPrevious.has(context) || warnedPrevious.size >= 1_000) return;
    warnedPrevious.add(context);
    logger.warn(
      { secret: context },
      'A secret at rest opened only with SANDBOX_PREVIOUS_ENCRYPTION_KEY after the start sealed every secret with the current key: an instance still on the old key wrote it. Stop every instance on the old key, then restart this one to seal it again',
    );
  };
  const onOtherInstancesListening = (change: ListenChange) =>
    change.listening
      ? logger.info({ failedAttempts: change.failedAttempts }, 'Listening for the other instances on this PostgreSQL, after failed attempts: what they announced meanwhile is read now')
      : logger.warn(
          { error: change.error.message, code: (change.error as { code?: string }).code, retryInMs: change.retryInMs },
          "The connection that hears the other instances on this PostgreSQL was lost or refused: until it listens again (retried, each time twice as late, up to every 30 s), a delivery another instance made due waits for this instance's next poll, and a signing key another instance rotated or revoked is seen at this instance's next read of the keys (every 30 s)",
        );
  // One line per outage, not one with a stack per request and per worker pass (those are StoreUnavailable).
  const onReachChange = (change: ReachChange) =>
    change.reachable
      ? logger.info({ failedCalls: change.failedCalls }, 'The PostgreSQL server answers again')
      : logger.error(
          { error: change.error.message, code: (change.error.cause as { code?: string } | undefined)?.code },
          'The PostgreSQL server cannot be reached: until it answers again, requests that need it answer 500 (each still logged as a request) and the workers try again at their next pass; said once per outage',
        );
  return { onFailure, onMaintenance, onMadePrivate, onWaitingForLock, onOtherInstancesListening, onPreviousKeyUsed, onReachChange };
}

/** Where the current encryption key comes from (encryption-key.ts), for the log: never the key. */
export const encryptionKeySourceOf = (config: Config) =>
  config.encryptionKey ? 'SANDBOX_ENCRYPTION_KEY' : config.databaseUrl ? 'derived from DATABASE_URL' : isOnDisk(config.dataDir) ? 'the key file beside DATA_DIR' : 'random, in memory';

