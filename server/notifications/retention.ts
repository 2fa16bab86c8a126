// NOTIFICATION_RETENTION_DAYS: a long-running shared sandbox keeps every notification delivery and
// attempt otherwise (the soak review: its delivery log grows with each payment, for good). When set,
// a background loop deletes the deliveries that are over (delivered or abandoned) and whose last
// news is older than that many days, with their attempts: once at start, then every hour, a batch
// at a time so that no statement holds the store long. Pending deliveries are never deleted.
// Real time, not a seller's test clock: what is deleted is the sandbox's own record.
import type { Logger } from 'pino';
import type { Store } from '../store/store.ts';
import { createPoller, type Poller } from '../workers/poller.ts';
import { notificationRepository } from './repository.ts';

export const RETENTION_CHECK_MS = 60 * 60_000;
/** Deliveries deleted per statement (their attempts with them). */
export const RETENTION_BATCH = 500;
const DAY_MS = 24 * 60 * 60_000;

export function notificationRetention(deps: {
  store: Store;
  logger: Logger;
  retentionDays: number;
  now?: () => Date;
  checkEveryMs?: number;
}): Poller & { runOnce(): Promise<number> } {
  const { store, logger, retentionDays, now = () => new Date(), checkEveryMs = RETENTION_CHECK_MS } = deps;
  const repository = notificationRepository(store);
  let stopping = false;
  async function pass(): Promise<number> {
    const before = new Date(now().getTime() - retentionDays * DAY_MS);
    let deleted = 0;
    for (;;) {
      const batch = await repository.deleteFinishedBefore(before, RETENTION_BATCH);
      deleted += batch;
      if (batch < RETENTION_BATCH || stopping) break; // a stop waits for one batch at most
    }
    if (deleted > 0) logger.info({ deleted, retentionDays }, 'Deleted the notification deliveries over for longer than NOTIFICATION_RETENTION_DAYS, with their attempts');
    return deleted;
  }
  const poller = createPoller(pass, { intervalMs: checkEveryMs, logger, name: 'notification retention' });
  return {
    ...poller,
    /** One pass now, outside the loop: how many deliveries it deleted. */
    runOnce: pass,
    /** A first pass at once, then one every `checkEveryMs`. */
    start() {
      stopping = false;
      poller.start();
      poller.wake();
    },
    stop() {
      stopping = true;
      return poller.stop();
    },
  };
}
