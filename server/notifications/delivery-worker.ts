// The delivery worker as the server runs it: the seller's notification configuration is the target,
// checked again with the URL rule at each attempt, its host name checked on every address by the
// connection's own lookup (so a name that changes its answer cannot pass), and the contract's retry
// policy, scaled by config.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createDeliveryWorker, type DeliveryWorker, type NotificationTarget, type RefusedTarget } from './delivery.ts';
import { sellerLookupsOf } from '../http/fair-lookups.ts';
import { connectionLookup, type HostResolver } from '../http/public-addresses.ts';
import { CONTRACT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
import type { Store } from '../store/store.ts';
import { SealedSecretUnreadable } from '../store/sealed-secrets.ts';
import { notificationUrlProblem } from '../web-checkout/notification-url.ts';
import { webCheckoutRepository, type StoredTechnicalConfiguration } from '../web-checkout/repository.ts';

/** The contract's policy with its delays scaled so that the first retry waits `baseDelayMs` (30 s by default). */
export function retryPolicyOf(config: Pick<Config, 'notificationRetryBaseMs'>): RetryPolicy {
  const scale = config.notificationRetryBaseMs / CONTRACT_RETRY_POLICY.baseDelayMs;
  return { ...CONTRACT_RETRY_POLICY, baseDelayMs: config.notificationRetryBaseMs, maxDelayMs: Math.round(CONTRACT_RETRY_POLICY.maxDelayMs * scale) };
}

/**
 * The seller's configured notification, or why it may not be called: its URL refused, or its
 * password sealed with another key than this instance's (an instance on another key wrote it; each
 * attempt then fails, and the delivery is given up after the policy's attempts, not tried forever).
 */
export function notificationTargetOf(store: Store, allowPrivateNotificationUrls: boolean) {
  return async (sellerId: string): Promise<NotificationTarget | RefusedTarget | undefined> => {
    let c: StoredTechnicalConfiguration | undefined;
    try {
      c = await webCheckoutRepository(store).findTechnicalConfiguration(sellerId);
    } catch (error) {
      if (error instanceof SealedSecretUnreadable) return { url: null, refused: UNREADABLE_PASSWORD };
      throw error;
    }
    if (!c?.notificationUrl || c.notificationUser === null || c.notificationPassword === null) return undefined;
    const problem = notificationUrlProblem(c.notificationUrl, allowPrivateNotificationUrls);
    if (problem) return { url: c.notificationUrl, refused: `notification URL refused: ${problem}` };
    return { url: c.notificationUrl, user: c.notificationUser, password: c.notificationPassword };
  };
}

const UNREADABLE_PASSWORD = "the seller's notification password cannot be decrypted with this sandbox's encryption key (another instance sealed it with another key)";

/** `resolveHostName`: the system's resolver unless a test injects one. */
export function notificationDeliveryWorker(deps: { store: Store; logger: Logger; config: Config; resolveHostName?: HostResolver }): DeliveryWorker {
  const { allowPrivateNotificationUrls } = deps.config;
  // Each seller's host names in its own turn, fairly with the others' (http/fair-lookups.ts).
  const lookups = sellerLookupsOf(deps.resolveHostName, allowPrivateNotificationUrls);
  return createDeliveryWorker({
    store: deps.store,
    logger: deps.logger,
    resolveTarget: notificationTargetOf(deps.store, allowPrivateNotificationUrls),
    lookupFor: (sellerId) => connectionLookup(lookups(sellerId), allowPrivateNotificationUrls),
    policy: retryPolicyOf(deps.config),
    pollIntervalMs: deps.config.notificationPollIntervalMs,
  });
}
