// Payment events of subscriptions: once per idempotency key (per seller), through the payment state
// machine, then the subscription's (billing.ts).
import type { AccessTokenClaims } from '../authentication/access-tokens.ts';
import type { components } from '../http/contract.ts';
import { recurrenceError } from '../http/recurrence-errors.ts';
import { planRepository } from '../plan/repository.ts';
import { isoSeconds } from '../http/time.ts';
import { planOfSeller } from '../plan/service.ts';
import type { Store } from '../store/store.ts';
import { isInFlight, nextScheduledDate, paymentTransitionAllowed, recordAttemptResult, settledPayment } from '../subscription/billing.ts';
import { notifyChargeResult } from '../subscription/charge-notification.ts';
import { errorPayment } from '../subscription/presenter.ts';
import { subscriptionRepository, type PaymentStatus } from '../subscription/repository.ts';
import { subscriptionOfSeller } from '../subscription/service.ts';
import { testClockRepository } from '../subscription/test-clock-repository.ts';
import { subscriptionEventRepository, type StoredEvent } from './repository.ts';

type Schemas = components['schemas'];
export type SubscriptionEventRequest = Schemas['SubscriptionEventRequest'];
export type SubscriptionEventResult = Schemas['SubscriptionEventResult'];

export const MESSAGES = {
  keyReused: 'Idempotency key already used with a different request',
  paymentNotFound: 'Payment not found',
  invalidTransition: 'Invalid payment status transition',
} as const;

/** `APPROVED` → `approved`. */
export const paymentStatusOfEvent = (status: SubscriptionEventRequest['status']) => status.toLowerCase() as PaymentStatus;

/** Same key, same event: the fields that make two calls "the same request". */
export function sameEvent(stored: Omit<StoredEvent, 'response'>, event: Omit<StoredEvent, 'response'>): boolean {
  return (
    stored.eventName === event.eventName &&
    stored.eventId.toLowerCase() === event.eventId.toLowerCase() &&
    stored.paymentId.toLowerCase() === event.paymentId.toLowerCase() &&
    stored.status === event.status
  );
}

export interface ApplyEventInput {
  token: AccessTokenClaims;
  eventName: 'payment';
  eventId: string;
  body: SubscriptionEventRequest;
  now?: Date;
}

/** The answer as JSON text: what is stored is exactly what is sent, then and on every replay. */
export async function applySubscriptionEvent(store: Store, input: ApplyEventInput): Promise<string> {
  const { token, eventName, eventId, body } = input;
  // The idempotency key lives in real time (the caller's retries); the payment and its
  // subscription live on their test clock's time when they have one, as their charges do.
  const now = input.now ?? new Date();
  const sellerId = token.sellerId;
  const key = body.idempotency_key.toLowerCase();
  const event = { eventName, eventId, paymentId: body.payment_id, status: body.status };
  return store.transaction(async (tx) => {
    const events = subscriptionEventRepository(tx);
    await events.forgetExpiredKey(sellerId, key, now);
    if (!(await events.claimKey(sellerId, key, event, now))) {
      const first = (await events.findEvent(sellerId, key))!;
      if (!sameEvent(first, event) || first.response === null) throw recurrenceError(409, MESSAGES.keyReused, { combined_id: eventId, seller_id: sellerId });
      return first.response;
    }

    const repo = subscriptionRepository(tx);
    const subscription = await subscriptionOfSeller(repo, sellerId, eventId, true);
    const at = input.now ?? (await testClockRepository(tx).timeOfSubscription(subscription.subscriptionId)) ?? now;
    const payment = await repo.findPayment(subscription.subscriptionId, body.payment_id, { forUpdate: true });
    if (!payment) throw recurrenceError(404, MESSAGES.paymentNotFound, { combined_id: eventId, order_id: subscription.orderId, seller_id: sellerId });
    const to = paymentStatusOfEvent(body.status);
    if (!paymentTransitionAllowed(payment.status, to)) {
      throw recurrenceError(422, MESSAGES.invalidTransition, {
        combined_id: eventId,
        order_id: subscription.orderId,
        seller_id: sellerId,
        payments: [errorPayment(payment, `${payment.status} cannot move to ${to}`)],
      });
    }

    const settled = settledPayment(payment, to, at);
    await repo.updatePayment(settled);
    let status = subscription.status;
    let installments = await repo.listInstallments(subscription.subscriptionId);
    const installment = installments.find((i) => i.installment === payment.installment)!;
    const latest = await repo.latestPayment(subscription.subscriptionId, payment.installment);
    // Only the result of the attempt in flight moves the subscription (a refund of a paid one does not).
    if (isInFlight(payment.status) && latest?.paymentId === payment.paymentId && status === 'processing' && installment.status === 'processing') {
      const plan = await planOfSeller(planRepository(tx), sellerId, subscription.planId);
      const effect = await recordAttemptResult(repo, { subscription, installments, installment, paymentStatus: to, billingCycle: plan.period.billing_cycle });
      status = effect.subscriptionStatus;
      installments = await repo.listInstallments(subscription.subscriptionId);
    }
    // A charge's result reaches the merchant like any other (nothing for a refund or a mere authorization).
    if (isInFlight(payment.status)) {
      const plan = await planOfSeller(planRepository(tx), sellerId, subscription.planId);
      await notifyChargeResult(tx, { subscription, plan, payment: settled, at });
    }
    const next = nextScheduledDate(status, installments);
    const result: SubscriptionEventResult = {
      event_name: eventName,
      event_id: eventId,
      idempotency_key: body.idempotency_key,
      payment_id: body.payment_id,
      status: body.status,
      installment: payment.installment,
      payment_status: to,
      subscription_status: status,
      ...(next ? { next_scheduled_date: `${next}T00:00:00Z` } : {}),
      applied_at: isoSeconds(at),
    };
    const text = JSON.stringify(result);
    await events.saveResponse(sellerId, key, text);
    return text;
  });
}

