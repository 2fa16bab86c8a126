// Writing a merchant notification: validated against the contract's webhook schema, then stored in
// the caller's transaction, so the notification exists exactly when the payment result does.
import { randomUUID } from 'node:crypto';
import { checkCheckoutNotification } from '@payment-platform/contract/checkout-notification';
import type { CheckoutNotification } from '../http/contract.ts';
import type { Queryable } from '../store/store.ts';
import { notificationRepository } from './repository.ts';

export const CHECKOUT_NOTIFICATION = 'checkout-notification';

/**
 * Enqueues the checkout notification (`mode` instant, payment_link or recurring) for the seller's
 * notification URL. `tx` is the transaction that records the payment result. A payload that breaks
 * the contract throws (a bug of the caller) and so rolls that transaction back.
 */
export async function enqueueCheckoutNotification(
  tx: Queryable,
  sellerId: string,
  payload: CheckoutNotification,
  now: Date = new Date(),
): Promise<string> {
  if (!checkCheckoutNotification(payload)) {
    const problems = (checkCheckoutNotification.errors ?? []).map((e) => `${e.instancePath || '(payload)'} ${e.message ?? e.keyword}`);
    throw new Error(`The checkout notification breaks the contract: ${problems.join('; ')}`);
  }
  const deliveryId = randomUUID();
  await notificationRepository(tx).insert({ deliveryId, sellerId, event: CHECKOUT_NOTIFICATION, mode: payload.mode, payload, now });
  return deliveryId;
}
