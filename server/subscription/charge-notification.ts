// The merchant notification of a subscription charge result (`CheckoutNotification`, mode
// `recurring`, no `frontend`): written through the checkout's outbox in the transaction that records
// the result, and only when the seller has a notification URL (its web checkout configuration).
import { randomUUID } from 'node:crypto';
import type { CheckoutNotification } from '../http/contract.ts';
import { isoSeconds } from '../http/time.ts';
import { enqueueCheckoutNotification } from '../notifications/outbox.ts';
import { platformReferenceCode } from '../notifications/reference-code.ts';
import type { StoredPlan } from '../plan/repository.ts';
import type { Queryable } from '../store/store.ts';
import { webCheckoutRepository } from '../web-checkout/repository.ts';
import type { PaymentRow, PaymentStatus, SubscriptionRow } from './repository.ts';

/** A result the merchant hears about; `pending` and `authorized` are not results yet, a refund is not a charge. */
const NOTIFIED: Partial<Record<PaymentStatus, 'Authorized' | 'Denied'>> = {
  approved: 'Authorized',
  confirmed: 'Authorized',
  denied: 'Denied',
  expired: 'Denied',
  unprocessed: 'Denied',
};

/** The checkout's result status of a payment status, or undefined when it is no charge result. */
export const notificationStatusOf = (status: PaymentStatus) => NOTIFIED[status];

export function chargeNotification(input: {
  subscription: SubscriptionRow;
  plan: Pick<StoredPlan, 'name' | 'product_type'>;
  payment: PaymentRow;
  seller: { tradeName: string };
  at: Date;
}): CheckoutNotification | undefined {
  const { subscription: s, payment: p } = input;
  const status = notificationStatusOf(p.status);
  if (!status) return undefined;
  const r = p.acquirerResult;
  // The plan's product types are a subset of the checkout's (`ProductType`): echoed as they are.
  const productType = input.plan.product_type ?? undefined;
  return {
    checkout_id: randomUUID(),
    order_id: s.orderId,
    mode: 'recurring',
    seller: { id: s.sellerId, trade_name: input.seller.tradeName, settings: { notification_url_configured: true } },
    payment: {
      method: s.paymentMethod,
      amount: p.amount,
      currency: p.currency as CheckoutNotification['payment']['currency'],
      result: {
        payment_id: p.paymentId,
        status,
        ...(status === 'Authorized' && r.authorizationCode ? { authorization_code: r.authorizationCode } : {}),
        transaction_datetime: isoSeconds(p.paymentReceivedTimestamp ?? input.at),
        return_message: r.reasonMessage,
        return_code: r.reasonCode,
      },
    },
    ...(s.paymentType.soft_descriptor ? { soft_descriptor: s.paymentType.soft_descriptor } : {}),
    reference_code: platformReferenceCode(),
    product: [{ ...(productType ? { product_type: productType } : {}), title: input.plan.name, value: p.amount, quantity: 1 }],
  } as CheckoutNotification;
}

/**
 * Enqueues the notification of `payment`'s result in `tx` (the transaction that records it) when
 * the seller has a notification URL; answers the delivery id, or undefined when nothing is sent.
 */
export async function notifyChargeResult(
  tx: Queryable,
  input: { subscription: SubscriptionRow; plan: Pick<StoredPlan, 'name' | 'product_type'>; payment: PaymentRow; at: Date },
): Promise<string | undefined> {
  if (!notificationStatusOf(input.payment.status)) return undefined;
  const configuration = await webCheckoutRepository(tx).findTechnicalConfigurationWithoutPassword(input.subscription.sellerId);
  if (!configuration?.notificationUrl) return undefined;
  const { rows } = await tx.query<{ trade_name: string }>('SELECT trade_name FROM sellers WHERE seller_id = $1', [input.subscription.sellerId]);
  const payload = chargeNotification({ ...input, seller: { tradeName: rows[0]?.trade_name ?? '' } })!;
  // Delivery runs on real time even for a test clock's charge: due now, not at the clock's instant.
  return enqueueCheckoutNotification(tx, input.subscription.sellerId, payload, new Date());
}
