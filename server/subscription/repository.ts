// SQL of subscriptions, their installments and their charge attempts (payments). Dates travel as
// `YYYY-MM-DD` text, never as driver Date objects (which would bring a local time zone in).
import type { ChargeResult } from '../acquirer/index.ts';
import type { components } from '../http/contract.ts';
import { planJson, planOf, type PlanRow, type StoredPlan } from '../plan/repository.ts';
import { instantAsEpochMs, type Queryable } from '../store/store.ts';

type Schemas = components['schemas'];
export type SubscriptionStatus = Schemas['SubscriptionStatus'];
export type PaymentStatus = Schemas['SubscriptionPaymentStatus'];
export type PaymentMethod = 'credit' | 'debit';
/** The answered `payment_type.credit` / `payment_type.debit` (no number token, no cryptogram). */
export type StoredPaymentType = Schemas['SubscriptionCreditPaymentType'];

export interface SubscriptionRow {
  subscriptionId: string;
  sellerId: string;
  planId: string;
  orderId: string;
  customerId: string;
  installmentStartDate: string | null;
  createDate: Date;
  paymentDate: number;
  status: SubscriptionStatus;
  statusDetails: string;
  paymentMethod: PaymentMethod;
  paymentType: StoredPaymentType;
  cardNumberToken: string;
  shippings: Schemas['SubscriptionShipping'][] | null;
  device: Schemas['SubscriptionDevice'] | null;
  shippingAmount: number;
  /** The sandbox test clock the subscription lives on; null = real time. */
  testClockId: string | null;
}

/** scheduled → processing → paid, or → retrying → processing …, or failed; void when billing stopped first. */
export type InstallmentStatus = 'scheduled' | 'processing' | 'retrying' | 'paid' | 'failed' | 'void';

export interface InstallmentRow {
  installment: number;
  originalScheduledDate: string;
  originalAmount: number;
  scheduledDate: string;
  amount: number;
  floating: boolean;
  status: InstallmentStatus;
  attempts: number;
  nextAttemptOn: string | null;
}

/** The acquirer's answer as kept with a payment (ids, reason, authorization); never a card number. */
export type AcquirerResult = Omit<ChargeResult, 'outcome' | 'authorizationTimestamp' | 'brand'> & {
  /** ISO 8601, as stored. */
  authorizationTimestamp?: string;
  brand: Schemas['SubscriptionCardBrand'];
  softDescriptor?: string;
};

export interface PaymentRow {
  paymentId: string;
  subscriptionId: string;
  sellerId: string;
  installment: number;
  attempt: number;
  orderId: string;
  amount: number;
  currency: string;
  status: PaymentStatus;
  delayed: boolean;
  acquirerResult: AcquirerResult;
  paymentReceivedTimestamp: Date | null;
  createdAt: Date;
}

const SUBSCRIPTION_COLUMNS = `subscription_id AS "subscriptionId", seller_id AS "sellerId", plan_id AS "planId",
  order_id AS "orderId", customer_id AS "customerId", installment_start_date::text AS "installmentStartDate",
  create_date AS "createDate", payment_date AS "paymentDate", status, status_details AS "statusDetails",
  payment_method AS "paymentMethod", payment_type AS "paymentType", card_number_token AS "cardNumberToken",
  shippings, device, shipping_amount AS "shippingAmount", test_clock_id AS "testClockId"`;

const INSTALLMENT_COLUMNS = `installment, original_scheduled_date::text AS "originalScheduledDate",
  original_amount AS "originalAmount", scheduled_date::text AS "scheduledDate", amount, floating, status, attempts,
  next_attempt_on::text AS "nextAttemptOn"`;

const PAYMENT_FIELDS = `payment_id AS "paymentId", subscription_id AS "subscriptionId", seller_id AS "sellerId",
  installment, attempt, order_id AS "orderId", amount, currency, status, delayed, acquirer_result AS "acquirerResult"`;
const PAYMENT_COLUMNS = `${PAYMENT_FIELDS}, payment_received_timestamp AS "paymentReceivedTimestamp", created_at AS "createdAt"`;
/** The same, read as JSON: its instants as milliseconds since the epoch (instantAsEpochMs). */
const PAYMENT_JSON_COLUMNS = `${PAYMENT_FIELDS}, ${instantAsEpochMs('payment_received_timestamp')} AS "paymentReceivedTimestamp",
  ${instantAsEpochMs('created_at')} AS "createdAt"`;

/** A subscription with what its GET answers: its plan, its installments in order, its latest payment. */
export interface SubscriptionView {
  subscription: SubscriptionRow;
  /** Always there (a subscription keeps its plan); undefined only if the plan row were gone. */
  plan?: StoredPlan;
  installments: InstallmentRow[];
  payment?: PaymentRow;
}

/** A payment as JSON brings it: its instants as milliseconds since the epoch. */
type PaymentJson = Omit<PaymentRow, 'paymentReceivedTimestamp' | 'createdAt'> & { paymentReceivedTimestamp: number | null; createdAt: number };

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export function subscriptionRepository(db: Queryable) {
  return {
    async insertSubscription(s: SubscriptionRow): Promise<void> {
      await db.query(
        `INSERT INTO subscriptions (subscription_id, seller_id, plan_id, order_id, customer_id, installment_start_date,
           create_date, payment_date, status, status_details, payment_method, payment_type, card_number_token, shippings,
           device, shipping_amount, test_clock_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          s.subscriptionId, s.sellerId, s.planId, s.orderId, s.customerId, s.installmentStartDate, s.createDate, s.paymentDate,
          s.status, s.statusDetails, s.paymentMethod, json(s.paymentType), s.cardNumberToken, json(s.shippings), json(s.device),
          s.shippingAmount, s.testClockId,
        ],
      );
    },

    /** The seller's subscription; another seller's is as unknown as a missing one. */
    async findSubscription(sellerId: string, subscriptionId: string, options: { forUpdate?: boolean } = {}): Promise<SubscriptionRow | undefined> {
      const { rows } = await db.query<SubscriptionRow>(
        `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE subscription_id = $1 AND seller_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
        [subscriptionId, sellerId],
      );
      return rows[0];
    },

    /**
     * The seller's subscription and what its GET answers, in one statement (one snapshot, and one
     * round trip instead of four): plan, installments and latest payment as JSON of the very
     * columns their own reads select, instants as epoch milliseconds (made Dates again here).
     */
    async findSubscriptionView(sellerId: string, subscriptionId: string): Promise<SubscriptionView | undefined> {
      const { rows } = await db.query<SubscriptionRow & { plan: PlanRow | null; installments: InstallmentRow[]; payment: PaymentJson | null }>(
        `SELECT ${SUBSCRIPTION_COLUMNS},
           ${planJson('s.seller_id', 's.plan_id')} AS plan,
           (SELECT coalesce(json_agg(i ORDER BY i.installment), '[]') FROM (SELECT ${INSTALLMENT_COLUMNS} FROM subscription_installments
             WHERE subscription_id = s.subscription_id) i) AS installments,
           (SELECT row_to_json(p) FROM (SELECT ${PAYMENT_JSON_COLUMNS} FROM subscription_payments WHERE subscription_id = s.subscription_id
             ORDER BY installment DESC, attempt DESC LIMIT 1) p) AS payment
         FROM subscriptions s WHERE subscription_id = $1 AND seller_id = $2`,
        [subscriptionId, sellerId],
      );
      const row = rows[0];
      if (!row) return undefined;
      const { plan, installments, payment, ...subscription } = row;
      return {
        subscription,
        ...(plan ? { plan: planOf(plan) } : {}),
        installments,
        ...(payment
          ? { payment: { ...payment, createdAt: new Date(payment.createdAt), paymentReceivedTimestamp: payment.paymentReceivedTimestamp === null ? null : new Date(payment.paymentReceivedTimestamp) } }
          : {}),
      };
    },

    async setSubscriptionStatus(subscriptionId: string, status: SubscriptionStatus, statusDetails: string): Promise<void> {
      await db.query('UPDATE subscriptions SET status = $2, status_details = $3, updated_at = now() WHERE subscription_id = $1', [
        subscriptionId,
        status,
        statusDetails,
      ]);
    },

    async insertInstallments(subscriptionId: string, sellerId: string, installments: InstallmentRow[]): Promise<void> {
      for (const i of installments) {
        await db.query(
          `INSERT INTO subscription_installments (subscription_id, installment, seller_id, original_scheduled_date,
             original_amount, scheduled_date, amount, floating, status, attempts, next_attempt_on)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [subscriptionId, i.installment, sellerId, i.originalScheduledDate, i.originalAmount, i.scheduledDate, i.amount, i.floating, i.status, i.attempts, i.nextAttemptOn],
        );
      }
    },

    async listInstallments(subscriptionId: string): Promise<InstallmentRow[]> {
      const { rows } = await db.query<InstallmentRow>(
        `SELECT ${INSTALLMENT_COLUMNS} FROM subscription_installments WHERE subscription_id = $1 ORDER BY installment`,
        [subscriptionId],
      );
      return rows;
    },

    async updateInstallment(subscriptionId: string, i: InstallmentRow): Promise<void> {
      await db.query(
        `UPDATE subscription_installments SET scheduled_date = $3, amount = $4, floating = $5, status = $6, attempts = $7,
           next_attempt_on = $8, paid_at = CASE WHEN $6 = 'paid' THEN coalesce(paid_at, now()) ELSE paid_at END
         WHERE subscription_id = $1 AND installment = $2`,
        [subscriptionId, i.installment, i.scheduledDate, i.amount, i.floating, i.status, i.attempts, i.nextAttemptOn],
      );
    },

    /** Billing stopped: installments never charged will not be. */
    async voidScheduledInstallments(subscriptionId: string): Promise<void> {
      await db.query(
        `UPDATE subscription_installments SET status = 'void', next_attempt_on = NULL WHERE subscription_id = $1 AND status = 'scheduled'`,
        [subscriptionId],
      );
    },

    async insertPayment(p: PaymentRow): Promise<void> {
      await db.query(
        `INSERT INTO subscription_payments (payment_id, subscription_id, seller_id, installment, attempt, order_id, amount,
           currency, status, delayed, acquirer_result, payment_received_timestamp, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [p.paymentId, p.subscriptionId, p.sellerId, p.installment, p.attempt, p.orderId, p.amount, p.currency, p.status, p.delayed, json(p.acquirerResult), p.paymentReceivedTimestamp, p.createdAt],
      );
    },

    async updatePayment(p: Pick<PaymentRow, 'paymentId' | 'status' | 'acquirerResult' | 'paymentReceivedTimestamp'>): Promise<void> {
      await db.query('UPDATE subscription_payments SET status = $2, acquirer_result = $3, payment_received_timestamp = $4 WHERE payment_id = $1', [
        p.paymentId,
        p.status,
        json(p.acquirerResult),
        p.paymentReceivedTimestamp,
      ]);
    },

    /** The subscription's latest attempt (highest installment, then highest attempt). */
    async latestPayment(subscriptionId: string, installment?: number): Promise<PaymentRow | undefined> {
      const { rows } = await db.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM subscription_payments
          WHERE subscription_id = $1 AND ($2::int IS NULL OR installment = $2)
          ORDER BY installment DESC, attempt DESC LIMIT 1`,
        [subscriptionId, installment ?? null],
      );
      return rows[0];
    },

    async findPayment(subscriptionId: string, paymentId: string, options: { forUpdate?: boolean } = {}): Promise<PaymentRow | undefined> {
      const { rows } = await db.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM subscription_payments WHERE subscription_id = $1 AND payment_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
        [subscriptionId, paymentId],
      );
      return rows[0];
    },

    async anyInstallmentPaid(subscriptionId: string): Promise<boolean> {
      const { rowCount } = await db.query(`SELECT 1 FROM subscription_installments WHERE subscription_id = $1 AND status = 'paid' LIMIT 1`, [subscriptionId]);
      return rowCount > 0;
    },
  };
}

export type SubscriptionRepository = ReturnType<typeof subscriptionRepository>;
