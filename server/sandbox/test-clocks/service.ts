// Sandbox test clocks (reference-only, Stripe-like): a clock frozen at an instant, the seller's
// customers attached to it (their new subscriptions live on its time), advancing it (runs every
// charge due up to the new time, in order), and the sandbox's cancellation and charge list of a
// subscription.
import { randomUUID } from 'node:crypto';
import type { components } from '../../http/contract.ts';
import { ApiError } from '../../http/errors.ts';
import { planRepository } from '../../plan/repository.ts';
import { isoSeconds } from '../../http/time.ts';
import type { Store } from '../../store/store.ts';
import { FINAL_SUBSCRIPTION_STATUSES, isInFlight } from '../../subscription/billing.ts';
import { billingRepository } from '../../subscription/billing-repository.ts';
import { runDueBilling } from '../../subscription/billing-worker.ts';
import { subscriptionRepository } from '../../subscription/repository.ts';
import { settledPayment } from '../../subscription/billing.ts';
import { testClockRepository, type TestClockRow } from '../../subscription/test-clock-repository.ts';
import { chargesRepository } from './charges-repository.ts';

type Schemas = components['schemas'];
export type TestClock = Schemas['SandboxTestClock'];

/** One advance moves a clock at most this far, so that one call stays short. */
export const MAX_ADVANCE_YEARS = 5;

const clockNotFound = () => new ApiError(404, 'test_clock_not_found', 'Test clock not found');
const subscriptionNotFound = () => new ApiError(404, 'subscription_not_found', 'Subscription not found');
const unprocessable = (message: string, pointer?: string, detail?: string) =>
  new ApiError(422, 'validation_error', message, pointer ? [{ location: 'body', pointer, message: detail ?? message }] : []);

async function clockView(store: Store, clock: TestClockRow, extra: Partial<TestClock> = {}): Promise<TestClock> {
  const repo = testClockRepository(store);
  return {
    test_clock_id: clock.testClockId,
    seller_id: clock.sellerId,
    ...(clock.name !== null ? { name: clock.name } : {}),
    frozen_time: isoSeconds(clock.frozenTime),
    customer_ids: await repo.customersOf(clock.testClockId),
    subscription_ids: await repo.subscriptionsOf(clock.testClockId),
    created_at: isoSeconds(clock.createdAt),
    ...extra,
  };
}

/** A customer lives on at most one clock of its seller. */
export function customersAlreadyOnAClock(requested: readonly string[], attached: ReadonlyArray<{ customerId: string; testClockId: string }>) {
  return requested.flatMap((customerId, index) => {
    const on = attached.find((a) => a.customerId === customerId);
    return on ? [{ index, customerId, testClockId: on.testClockId }] : [];
  });
}

export async function createTestClock(store: Store, body: Schemas['SandboxTestClockCreate'], now = new Date()): Promise<TestClock> {
  const clock = await store.transaction(async (tx) => {
    const seller = await planRepository(tx).findSeller(body.seller_id);
    if (!seller) throw new ApiError(404, 'seller_not_found', 'Seller not found');
    const repo = testClockRepository(tx);
    const row: TestClockRow = { testClockId: randomUUID(), sellerId: seller.sellerId, name: body.name ?? null, frozenTime: new Date(body.frozen_time), createdAt: now };
    const refused = await repo.insertClock(row, body.customer_ids);
    // Read after the insert: a clock created at the same time is committed by then (the insert waited for it).
    const taken = refused.length ? customersAlreadyOnAClock(body.customer_ids, await repo.clocksOfCustomers(seller.sellerId, refused))[0] : undefined;
    if (taken) {
      throw unprocessable(
        `customer ${taken.customerId} is already attached to test clock ${taken.testClockId}`,
        `/customer_ids/${taken.index}`,
        `already attached to test clock ${taken.testClockId}`,
      );
    }
    return row;
  });
  return clockView(store, clock);
}

export async function getTestClock(store: Store, testClockId: string): Promise<TestClock> {
  const clock = await testClockRepository(store).findClock(testClockId);
  if (!clock) throw clockNotFound();
  return clockView(store, clock);
}

/** A clock moves forward only, and at most MAX_ADVANCE_YEARS at a time. */
export function advanceProblem(from: Date, to: Date): ApiError | undefined {
  if (to.getTime() < from.getTime()) {
    return unprocessable(`frozen_time must not be before the clock's time ${isoSeconds(from)}`, '/frozen_time', `must not be before ${isoSeconds(from)}`);
  }
  const limit = new Date(from);
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_ADVANCE_YEARS);
  if (to.getTime() > limit.getTime()) {
    return unprocessable(`frozen_time must be at most ${MAX_ADVANCE_YEARS} years after the clock's time ${isoSeconds(from)}`, '/frozen_time', `must not be after ${isoSeconds(limit)}`);
  }
  return undefined;
}

/**
 * Runs everything due on the clock's subscriptions up to `to`, in order, then moves the clock. When
 * `signal` aborts (the caller left), the run stops between two charges and the clock keeps its time:
 * the charges already run stay (each commits on its own), and the next advance runs the rest.
 */
export async function advanceTestClock(
  store: Store,
  testClockId: string,
  frozenTime: string,
  signal?: AbortSignal,
): Promise<{ clock: TestClock; durationMs: number } | { stopped: true; chargesRun: number }> {
  const repo = testClockRepository(store);
  const clock = await repo.findClock(testClockId);
  if (!clock) throw clockNotFound();
  const to = new Date(frozenTime);
  const problem = advanceProblem(clock.frozenTime, to);
  if (problem) throw problem;
  const started = performance.now();
  const ran = await runDueBilling(store, { testClockId, floor: clock.frozenTime, until: to }, { signal });
  if (signal?.aborted) return { stopped: true, chargesRun: ran };
  await repo.moveClock(testClockId, to);
  const durationMs = performance.now() - started;
  // Gone meanwhile (a reset() during the advance deletes every clock): the clock is not found.
  const moved = await repo.findClock(testClockId);
  if (!moved) throw clockNotFound();
  return { clock: await clockView(store, moved, { charges_run: ran }), durationMs };
}

/**
 * Cancels a subscription (the platform's back office does it; the contract has no call): its
 * in-flight payment is canceled, its installments not yet paid become void, billing stops.
 */
export async function cancelSubscription(store: Store, subscriptionId: string, realNow = new Date()): Promise<Schemas['SandboxSubscriptionCanceled']> {
  return store.transaction(async (tx) => {
    const found = await billingRepository(tx).findSubscriptionById(subscriptionId, { forUpdate: true });
    if (!found) throw subscriptionNotFound();
    const repo = subscriptionRepository(tx);
    const subscription = (await repo.findSubscription(found.sellerId, subscriptionId))!;
    if (FINAL_SUBSCRIPTION_STATUSES.has(subscription.status)) throw unprocessable(`Subscription is already ${subscription.status}`);
    const now = (await testClockRepository(tx).timeOfSubscription(subscriptionId)) ?? realNow;
    const latest = await repo.latestPayment(subscriptionId);
    if (latest && isInFlight(latest.status)) await repo.updatePayment(settledPayment(latest, 'canceled', now));
    const voided = await chargesRepository(tx).voidUnpaidInstallments(subscriptionId);
    const details = `Canceled; ${voided} of ${(await repo.listInstallments(subscriptionId)).length} installments were not charged`;
    await repo.setSubscriptionStatus(subscriptionId, 'canceled', details);
    return { subscription_id: subscriptionId, status: 'canceled', status_details: details };
  });
}

/**
 * The subscription, its installments and their attempts as one state: read under the subscription's
 * row lock, which every billing event and payment event takes before it changes any of them.
 */
export async function listSubscriptionCharges(store: Store, subscriptionId: string): Promise<Schemas['SandboxSubscriptionCharges']> {
  const { subscription, installments, attempts } = await store.transaction(async (tx) => {
    const found = await billingRepository(tx).findSubscriptionById(subscriptionId, { forUpdate: true });
    if (!found) throw subscriptionNotFound();
    const repo = subscriptionRepository(tx);
    return {
      subscription: (await repo.findSubscription(found.sellerId, subscriptionId))!,
      installments: await repo.listInstallments(subscriptionId),
      attempts: await chargesRepository(tx).attemptsOf(subscriptionId),
    };
  });
  return {
    subscription_id: subscriptionId,
    seller_id: subscription.sellerId,
    ...(subscription.testClockId ? { test_clock_id: subscription.testClockId } : {}),
    status: subscription.status,
    installments: installments.map((i) => ({
      installment: i.installment,
      scheduled_date: i.scheduledDate,
      original_scheduled_date: i.originalScheduledDate,
      amount: i.amount,
      original_amount: i.originalAmount,
      status: i.status,
      ...(i.nextAttemptOn ? { next_attempt_date: i.nextAttemptOn } : {}),
      attempts: attempts
        .filter((a) => a.installment === i.installment)
        .map((a) => ({
          payment_id: a.paymentId,
          attempt: a.attempt,
          amount: a.amount,
          currency: a.currency as Schemas['CurrencyCode'],
          status: a.status,
          delayed: a.delayed,
          attempted_at: isoSeconds(a.createdAt),
        })),
    })),
  };
}
