// Stored subscription data as the contract's answers (Subscription, SubscriptionPayment,
// floating data, error payments). Shapes only; the rules are in service.ts and billing.ts.
import type { components } from '../http/contract.ts';
import type { RecurrenceErrorPayment } from '../http/recurrence-errors.ts';
import { type StoredPlan } from '../plan/repository.ts';
import { isoSeconds } from '../http/time.ts';
import { presentPlan } from '../plan/service.ts';
import { nextScheduledDate } from './billing.ts';
import type { InstallmentRow, PaymentRow, PaymentStatus, SubscriptionRow } from './repository.ts';

type Schemas = components['schemas'];
export type Subscription = Schemas['Subscription'];
export type SubscriptionPayment = Schemas['SubscriptionPayment'];
export type SubscriptionFloatingData = Schemas['SubscriptionFloatingData'];

const midnight = (date: string) => `${date}T00:00:00Z`;

/** The payment's `error` (contract: `SubscriptionPaymentError`), for failed attempts only. */
const PAYMENT_ERRORS: Partial<Record<PaymentStatus, { status_code: number; message: string }>> = {
  denied: { status_code: 422, message: 'Payment denied by the issuer' },
  expired: { status_code: 408, message: 'Payment result not received in time' },
  unprocessed: { status_code: 502, message: 'Payment could not be processed' },
};

export function presentPayment(payment: PaymentRow, method: 'credit' | 'debit'): SubscriptionPayment {
  const r = payment.acquirerResult;
  const answered = payment.status !== 'pending';
  const failure = PAYMENT_ERRORS[payment.status];
  const transaction: Schemas['SubscriptionPaymentTransaction'] = {
    delayed: payment.delayed,
    authorization_code: r.authorizationCode,
    reason_code: r.reasonCode,
    reason_message: r.reasonMessage,
    acquirer_transaction_id: r.acquirerTransactionId,
    transaction_id: r.transactionId,
    ...(r.authorizationTimestamp ? { authorization_timestamp: isoSeconds(r.authorizationTimestamp) } : {}),
    acquirer: r.acquirer,
    ...(r.softDescriptor ? { soft_descriptor: r.softDescriptor } : {}),
    terminal_nsu: r.terminalNsu,
    brand: r.brand,
  };
  return {
    seller_id: payment.sellerId,
    order_id: payment.orderId,
    payment_id: payment.paymentId,
    amount: payment.amount,
    currency: payment.currency,
    status: payment.status,
    ...(payment.paymentReceivedTimestamp ? { payment_received_timestamp: isoSeconds(payment.paymentReceivedTimestamp) } : {}),
    // Present once the acquirer has answered: a pending attempt has no result yet.
    ...(answered ? { [method]: transaction } : {}),
    ...(failure
      ? {
          error: {
            ...failure,
            name: 'be-payment',
            details: [
              {
                acquirer_transaction_id: r.acquirerTransactionId,
                description: r.reasonMessage,
                ...(r.reasonDetail ? { description_detail: r.reasonDetail } : {}),
                error_code: r.reasonCode,
                payment_id: payment.paymentId,
                status: payment.status,
                terminal_nsu: r.terminalNsu,
              },
            ],
          },
        }
      : {}),
  };
}

/** A payment as an entry of an error body's `payments[]` (strings only, as the seed types them). */
export function errorPayment(payment: PaymentRow, description?: string): RecurrenceErrorPayment {
  const r = payment.acquirerResult;
  return {
    status: payment.status,
    ...(description ? { description } : {}),
    brand: r.brand,
    payment_id: payment.paymentId,
    seller_id: payment.sellerId,
    amount: String(payment.amount),
    currency: payment.currency,
    order_id: payment.orderId,
    payment_tag: String(payment.installment),
    acquirer_transaction_id: r.acquirerTransactionId,
    ...(r.authorizationCode ? { authorization_code: r.authorizationCode } : {}),
    transaction_id: r.transactionId,
    reason_code: r.reasonCode,
    reason_message: r.reasonMessage,
  };
}

/** The installments changed by updateFloatingInstallment, sorted by installment. */
export function floatingDataOf(installments: readonly InstallmentRow[]): SubscriptionFloatingData[] {
  return installments
    .filter((i) => i.floating)
    .map((i) => ({
      installment: i.installment,
      new_amount: i.amount,
      new_scheduled_date: i.scheduledDate,
      original_scheduled_date: i.originalScheduledDate,
      original_amount: i.originalAmount,
    }));
}

export function presentSubscription(input: {
  subscription: SubscriptionRow;
  plan: StoredPlan;
  installments: readonly InstallmentRow[];
  payment?: PaymentRow;
  withFloatingData: boolean;
}): Subscription {
  const { subscription: s, installments } = input;
  const last = installments[installments.length - 1];
  const next = nextScheduledDate(s.status, installments);
  return {
    seller_id: s.sellerId,
    order_id: s.orderId,
    ...(s.installmentStartDate ? { installment_start_date: s.installmentStartDate } : {}),
    create_date: isoSeconds(s.createDate),
    ...(last ? { end_date: midnight(last.scheduledDate) } : {}),
    payment_date: s.paymentDate,
    ...(next ? { next_scheduled_date: midnight(next) } : {}),
    subscription: {
      subscription_id: s.subscriptionId,
      payment_type: { [s.paymentMethod]: s.paymentType },
      ...(s.shippings ? { shippings: s.shippings } : {}),
    },
    customer: { customer_id: s.customerId },
    plan: presentPlan(input.plan),
    ...(s.device ? { device: s.device } : {}),
    ...(input.withFloatingData ? { floating_data: floatingDataOf(installments) } : {}),
    status: s.status,
    status_details: s.statusDetails,
    ...(input.payment ? { payment: presentPayment(input.payment, s.paymentMethod) } : {}),
  };
}
