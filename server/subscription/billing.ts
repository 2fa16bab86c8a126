// The billing rules of a subscription (contract: `SubscriptionStatus`, `SubscriptionPaymentStatus`):
// charging one installment through the acquirer, what an attempt's result does to the installment
// and the subscription, retries, and which payment moves are allowed. The charge made within
// createSubscription, the payment events and the later billing engine all go through here.
import { randomUUID } from 'node:crypto';
import { authorizationCode, charge, SETTLEMENT_REASONS, type ChargeOutcome } from '../acquirer/index.ts';
import { withinPlatformDates } from '../http/formats.ts';
import { addDays } from './schedule.ts';
import type {
  AcquirerResult,
  InstallmentRow,
  PaymentRow,
  PaymentStatus,
  SubscriptionRepository,
  SubscriptionRow,
  SubscriptionStatus,
} from './repository.ts';

/** A failed attempt is retried on its scheduled date + 1, + 3 and + 5 days. */
export const RETRY_OFFSETS_DAYS = [1, 3, 5] as const;

export const FINAL_SUBSCRIPTION_STATUSES: ReadonlySet<SubscriptionStatus> = new Set(['expired', 'suspended', 'failed', 'canceled']);
const PAID: ReadonlySet<PaymentStatus> = new Set(['approved', 'confirmed']);
const IN_FLIGHT: ReadonlySet<PaymentStatus> = new Set(['pending', 'authorized']);

/** The payment state machine: the moves a payment event may make (`SubscriptionPaymentStatus`). */
const PAYMENT_MOVES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['approved', 'authorized', 'confirmed', 'denied', 'expired', 'unprocessed', 'canceled'],
  authorized: ['confirmed', 'expired', 'canceled'],
  approved: ['canceled'],
  confirmed: ['canceled'],
  denied: [],
  expired: [],
  unprocessed: [],
  canceled: [],
};

export function paymentTransitionAllowed(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_MOVES[from].includes(to);
}

export const isInFlight = (status: PaymentStatus) => IN_FLIGHT.has(status);

/** The payment status of an acquirer outcome (3DS failure is a refusal: the payment has no such status). */
export function paymentStatusOfOutcome(outcome: ChargeOutcome): PaymentStatus {
  switch (outcome) {
    case 'approved':
      return 'approved';
    case 'pending':
      return 'pending';
    case 'processing_error':
      return 'unprocessed';
    case 'denied':
    case 'authentication_denied':
      return 'denied';
  }
}

/**
 * The retry date after `failedAttempts` failed attempts of an installment scheduled on
 * `scheduledDate`, or undefined when none remains (3 retries at most; a retry on or after the next
 * installment's date is dropped, and so is one after the last date the platform stores, 9999-12-31).
 */
export function nextRetryDate(scheduledDate: string, failedAttempts: number, nextInstallmentDate?: string): string | undefined {
  const offset = RETRY_OFFSETS_DAYS[failedAttempts - 1];
  if (offset === undefined) return undefined;
  const date = addDays(scheduledDate, offset);
  if (!withinPlatformDates(date)) return undefined;
  return nextInstallmentDate !== undefined && date >= nextInstallmentDate ? undefined : date;
}

/**
 * The next charge attempt's date: none while processing or final, else the earliest installment
 * waiting for an attempt (its scheduled date, or its retry date).
 */
export function nextScheduledDate(status: SubscriptionStatus, installments: readonly InstallmentRow[]): string | undefined {
  if (status === 'processing' || FINAL_SUBSCRIPTION_STATUSES.has(status)) return undefined;
  const waiting = installments.filter((i) => (i.status === 'scheduled' || i.status === 'retrying') && i.nextAttemptOn);
  return waiting.map((i) => i.nextAttemptOn!).sort()[0];
}

export interface AttemptEffect {
  subscriptionStatus: SubscriptionStatus;
  statusDetails: string;
  installment: InstallmentRow;
}

/**
 * What the result of an attempt of `installment` does (the `SubscriptionStatus` table): in flight
 * keeps `processing`; paid → `success` (`expired` after the last installment); failed → `delayed`
 * with a retry, else `suspended` (something was paid before) or `failed`.
 */
export function attemptEffect(input: {
  paymentStatus: PaymentStatus;
  installment: InstallmentRow;
  billingCycle: number;
  nextInstallmentDate?: string;
  anyInstallmentPaid: boolean;
}): AttemptEffect {
  const { paymentStatus, billingCycle } = input;
  const installment = { ...input.installment };
  const of = `Installment ${installment.installment} of ${billingCycle}`;
  if (IN_FLIGHT.has(paymentStatus)) {
    installment.status = 'processing';
    installment.nextAttemptOn = null;
    return { subscriptionStatus: 'processing', statusDetails: `${of} ${paymentStatus}`, installment };
  }
  if (PAID.has(paymentStatus)) {
    installment.status = 'paid';
    installment.nextAttemptOn = null;
    const last = installment.installment === billingCycle;
    return { subscriptionStatus: last ? 'expired' : 'success', statusDetails: last ? `${of} paid; the subscription ended` : `${of} paid`, installment };
  }
  const retry = nextRetryDate(installment.scheduledDate, installment.attempts, input.nextInstallmentDate);
  if (retry) {
    installment.status = 'retrying';
    installment.nextAttemptOn = retry;
    const details = `${of} ${paymentStatus}; retry ${installment.attempts} of ${RETRY_OFFSETS_DAYS.length} on ${retry}`;
    return { subscriptionStatus: 'delayed', statusDetails: details, installment };
  }
  installment.status = 'failed';
  installment.nextAttemptOn = null;
  return {
    subscriptionStatus: input.anyInstallmentPaid ? 'suspended' : 'failed',
    statusDetails: `${of} ${paymentStatus}; no retry left, billing stopped`,
    installment,
  };
}

/** Applies an attempt's result to the stored installment and subscription. */
export async function recordAttemptResult(
  repo: SubscriptionRepository,
  input: { subscription: SubscriptionRow; installments: readonly InstallmentRow[]; installment: InstallmentRow; paymentStatus: PaymentStatus; billingCycle: number },
): Promise<AttemptEffect> {
  const { subscription, installments, installment } = input;
  const next = installments.find((i) => i.installment === installment.installment + 1);
  const effect = attemptEffect({
    paymentStatus: input.paymentStatus,
    installment,
    billingCycle: input.billingCycle,
    nextInstallmentDate: next?.scheduledDate,
    anyInstallmentPaid: installments.some((i) => i.status === 'paid' && i.installment !== installment.installment),
  });
  await repo.updateInstallment(subscription.subscriptionId, effect.installment);
  await repo.setSubscriptionStatus(subscription.subscriptionId, effect.subscriptionStatus, effect.statusDetails);
  if (FINAL_SUBSCRIPTION_STATUSES.has(effect.subscriptionStatus)) await repo.voidScheduledInstallments(subscription.subscriptionId);
  return effect;
}

/** The order of one installment's charges: `<subscription order_id>-<installment>`. */
export const installmentOrderId = (orderId: string, installment: number) => `${orderId}-${installment}`;

/**
 * Charges one installment now: an installment of amount 0 is recorded as paid without a charge;
 * otherwise the acquirer decides and the attempt is stored as a payment. `delayed` marks a retry.
 */
export async function chargeInstallment(
  repo: SubscriptionRepository,
  input: { subscription: SubscriptionRow; installments: readonly InstallmentRow[]; installment: InstallmentRow; billingCycle: number; currency: string; now: Date },
): Promise<{ effect: AttemptEffect; payment?: PaymentRow }> {
  const { subscription, now } = input;
  const installment = { ...input.installment, attempts: input.installment.attempts + 1 };
  const delayed = input.installment.attempts > 0;
  if (installment.amount === 0) {
    const effect = await recordAttemptResult(repo, { ...input, installment: { ...installment, attempts: input.installment.attempts }, paymentStatus: 'approved' });
    return { effect };
  }
  const card = subscription.paymentType.card!;
  const result = charge({ numberToken: subscription.cardNumberToken, brand: card.brand }, now);
  const status = paymentStatusOfOutcome(result.outcome);
  const acquirerResult: AcquirerResult = {
    authorizationCode: result.authorizationCode,
    reasonCode: result.reasonCode,
    reasonMessage: result.reasonMessage,
    ...(result.reasonDetail ? { reasonDetail: result.reasonDetail } : {}),
    acquirer: result.acquirer,
    acquirerTransactionId: result.acquirerTransactionId,
    transactionId: result.transactionId,
    terminalNsu: result.terminalNsu,
    ...(result.authorizationTimestamp ? { authorizationTimestamp: result.authorizationTimestamp.toISOString() } : {}),
    brand: card.brand,
    ...(subscription.paymentType.soft_descriptor ? { softDescriptor: subscription.paymentType.soft_descriptor } : {}),
  };
  const payment: PaymentRow = {
    paymentId: randomUUID(),
    subscriptionId: subscription.subscriptionId,
    sellerId: subscription.sellerId,
    installment: installment.installment,
    attempt: installment.attempts,
    orderId: installmentOrderId(subscription.orderId, installment.installment),
    amount: installment.amount + subscription.shippingAmount,
    currency: input.currency,
    status,
    delayed,
    acquirerResult,
    paymentReceivedTimestamp: status === 'pending' ? null : now,
    createdAt: now,
  };
  await repo.insertPayment(payment);
  const effect = await recordAttemptResult(repo, { ...input, installment, paymentStatus: status });
  return { effect, payment };
}

/** The payment after the event: new status, the settlement's reason, the instant the result came. */
export function settledPayment(payment: PaymentRow, status: PaymentStatus, now: Date): PaymentRow {
  const reason = SETTLEMENT_REASONS[status]!;
  const authorizes = status === 'approved' || status === 'authorized' || status === 'confirmed';
  const previous = payment.acquirerResult;
  const { reasonDetail: _dropped, ...kept } = previous;
  return {
    ...payment,
    status,
    paymentReceivedTimestamp: now,
    acquirerResult: {
      ...kept,
      reasonCode: reason.reasonCode,
      reasonMessage: reason.reasonMessage,
      ...(reason.reasonDetail ? { reasonDetail: reason.reasonDetail } : {}),
      ...(authorizes && !previous.authorizationCode ? { authorizationCode: authorizationCode(), authorizationTimestamp: now.toISOString() } : {}),
    },
  };
}
