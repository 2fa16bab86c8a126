// The billing engine: runs what falls due on a time line — real time (the worker started by
// main.ts), or one sandbox test clock (advanceTestClock) — one event per transaction, in time order:
// installment charges and retries at 00:00:00Z of their date, and the expiry of payments whose
// result did not come in time (pending 24 h, authorized 7 days: `SubscriptionPaymentStatus`).
//
// Exactly once: an event is claimed by locking its subscription (FOR UPDATE SKIP LOCKED), re-read
// under the lock, and its result (payment, installment, subscription, merchant notification) is
// committed in that same transaction. A crash before the commit leaves nothing: the installment is
// still due and is charged by the next tick. The acquirer call is idempotent per installment
// attempt: its attempt number comes from the locked row, and (subscription, installment, attempt)
// is unique in subscription_payments, so no attempt can be recorded twice. The sandbox acquirer
// keeps no state, so an attempt rolled back by a crash has charged nothing; a real acquirer would
// get `<order_id>-<installment>` with the attempt number as its idempotency key, for that reason.
import type { Logger } from 'pino';
import { planRepository } from '../plan/repository.ts';
import { planOfSeller } from '../plan/service.ts';
import type { Queryable, Store } from '../store/store.ts';
import { chargeInstallment, isInFlight, recordAttemptResult, settledPayment } from './billing.ts';
import { billingRepository, type DueCharge, type DueExpiry } from './billing-repository.ts';
import { notifyChargeResult } from './charge-notification.ts';
import { subscriptionRepository } from './repository.ts';
import { utcDate } from './schedule.ts';
import { createPoller } from '../workers/poller.ts';

/** A time line: real time (`testClockId` null) or a test clock's, run up to `until`. */
export interface TimeLine {
  testClockId: string | null;
  /** Events are run at their own instant, but never before this one (the clock's time before an advance). */
  floor: Date;
  until: Date;
}

/** What one transaction did, and at which instant of the time line. */
export type EventRun = { kind: 'charged' | 'expired'; at: Date } | { kind: 'stale' };

/** The instant an installment charge falls due: 00:00:00Z of its date. */
export const dueInstant = (date: string) => new Date(`${date}T00:00:00Z`);

/** When an event of the time line runs: at its own instant, not before the floor. */
export const runInstant = (eventAt: Date, line: TimeLine) => new Date(Math.max(eventAt.getTime(), line.floor.getTime()));

/** Which of the two candidates comes first: the expiry on a tie (its result frees the subscription to be charged). */
export function earliestEvent(charge: DueCharge | undefined, expiry: DueExpiry | undefined): 'charge' | 'expiry' | undefined {
  if (!charge) return expiry ? 'expiry' : undefined;
  if (!expiry) return 'charge';
  return expiry.expiresAt.getTime() <= dueInstant(charge.due).getTime() ? 'expiry' : 'charge';
}

/** Charges a claimed installment, after checking under the lock that it is still due. */
async function runCharge(tx: Queryable, claim: DueCharge, line: TimeLine): Promise<EventRun> {
  const repo = subscriptionRepository(tx);
  const { sellerId } = (await billingRepository(tx).findSubscriptionById(claim.subscriptionId))!;
  const subscription = (await repo.findSubscription(sellerId, claim.subscriptionId))!;
  const installments = await repo.listInstallments(claim.subscriptionId);
  const installment = installments.find((i) => i.installment === claim.installment);
  const stillDue =
    ['created', 'success', 'delayed'].includes(subscription.status) &&
    installment !== undefined &&
    (installment.status === 'scheduled' || installment.status === 'retrying') &&
    installment.nextAttemptOn !== null &&
    installment.nextAttemptOn <= utcDate(line.until);
  if (!stillDue) return { kind: 'stale' };
  const plan = await planOfSeller(planRepository(tx), sellerId, subscription.planId);
  const at = runInstant(dueInstant(installment.nextAttemptOn!), line);
  const { payment } = await chargeInstallment(repo, { subscription, installments, installment, billingCycle: plan.period.billing_cycle, currency: plan.currency, now: at });
  if (payment) await notifyChargeResult(tx, { subscription, plan, payment, at });
  return { kind: 'charged', at };
}

/** Expires a claimed in-flight payment; its result moves the subscription as a payment event would. */
async function runExpiry(tx: Queryable, claim: DueExpiry, line: TimeLine): Promise<EventRun> {
  const repo = subscriptionRepository(tx);
  const { sellerId } = (await billingRepository(tx).findSubscriptionById(claim.subscriptionId))!;
  const payment = await repo.findPayment(claim.subscriptionId, claim.paymentId, { forUpdate: true });
  if (!payment || !isInFlight(payment.status)) return { kind: 'stale' };
  const at = runInstant(claim.expiresAt, line);
  const settled = settledPayment(payment, 'expired', at);
  await repo.updatePayment(settled);
  const subscription = (await repo.findSubscription(sellerId, claim.subscriptionId))!;
  const installments = await repo.listInstallments(claim.subscriptionId);
  const installment = installments.find((i) => i.installment === payment.installment)!;
  const latest = await repo.latestPayment(claim.subscriptionId, payment.installment);
  const plan = await planOfSeller(planRepository(tx), sellerId, subscription.planId);
  // As for a payment event: only the result of the attempt in flight moves the subscription.
  if (latest?.paymentId === payment.paymentId && subscription.status === 'processing' && installment.status === 'processing') {
    await recordAttemptResult(repo, { subscription, installments, installment, paymentStatus: 'expired', billingCycle: plan.period.billing_cycle });
  }
  await notifyChargeResult(tx, { subscription, plan, payment: settled, at });
  return { kind: 'expired', at };
}

/** Runs the earliest due event of the time line in one transaction; undefined when none can be claimed. */
export async function runNextEvent(store: Store, line: TimeLine): Promise<EventRun | undefined> {
  return store.transaction(async (tx) => {
    const billing = billingRepository(tx);
    const charge = await billing.claimNextCharge(line.testClockId, utcDate(line.until));
    const expiry = await billing.claimNextExpiry(line.testClockId, line.until);
    switch (earliestEvent(charge, expiry)) {
      case 'charge':
        return runCharge(tx, charge!, line);
      case 'expiry':
        return runExpiry(tx, expiry!, line);
      default:
        return undefined;
    }
  });
}

/** Whether anything is due on the time line, locked or not (another instance may be running it). */
async function anythingDue(store: Store, line: TimeLine): Promise<boolean> {
  const billing = billingRepository(store);
  const unlocked = { lock: false };
  return (await billing.claimNextCharge(line.testClockId, utcDate(line.until), unlocked)) !== undefined || (await billing.claimNextExpiry(line.testClockId, line.until, unlocked)) !== undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs every event due on the time line up to `until`, in order, and answers how many ran. Events
 * held by another instance are waited for, so that the answer comes when everything due is done.
 */
export async function runDueBilling(store: Store, line: TimeLine, options: { maxEvents?: number; signal?: AbortSignal } = {}): Promise<number> {
  const maxEvents = options.maxEvents ?? Number.POSITIVE_INFINITY;
  let ran = 0;
  // Time never goes back on a time line: an event that became due because of an earlier one (a
  // retry due at 00:00 after the expiry at 09:00 that made it possible) runs at that earlier one's instant.
  let floor = line.floor;
  while (ran < maxEvents && !options.signal?.aborted) {
    const run = await runNextEvent(store, { ...line, floor });
    if (run && run.kind !== 'stale') {
      ran++;
      if (run.at > floor) floor = run.at;
    }
    if (run !== undefined) continue;
    if (!(await anythingDue(store, line))) break;
    await sleep(5); // another instance holds what is due: wait for its commit
  }
  return ran;
}

export interface BillingWorkerOptions {
  store: Store;
  logger: Logger;
  pollIntervalMs: number;
  /** Most events per tick, so that a backlog does not hold the worker in one tick forever. */
  batchSize?: number;
  now?: () => Date;
}

/** The real-time billing worker: a tick every `pollIntervalMs`, stopped (after its tick) by `stop()`. */
export function createBillingWorker(options: BillingWorkerOptions) {
  const { store, logger, pollIntervalMs, batchSize = 500, now = () => new Date() } = options;

  async function tick(): Promise<number> {
    const at = now();
    return runDueBilling(store, { testClockId: null, floor: at, until: at }, { maxEvents: batchSize });
  }

  const poller = createPoller(tick, { intervalMs: pollIntervalMs, logger, name: 'billing' });
  return { tick, start: poller.start, stop: poller.stop };
}
