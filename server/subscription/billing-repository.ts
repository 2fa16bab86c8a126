// SQL of the billing engine: claiming the next due charge or payment expiry of one time line (real
// time, or one test clock). A claim locks the subscription row with FOR UPDATE SKIP LOCKED until the
// transaction that records the result commits, so two workers (two instances on one PostgreSQL)
// never work on one subscription at once. The subscription row is locked, not the installment,
// because every other writer (floating change, payment event, cancellation) locks it first too.
import type { Queryable } from '../store/store.ts';
import type { SubscriptionRow } from './repository.ts';

/** A charge of an installment due on `due` (`YYYY-MM-DD`, due at 00:00:00Z). */
export interface DueCharge {
  subscriptionId: string;
  installment: number;
  due: string;
}

/** An in-flight payment whose result did not come in time. */
export interface DueExpiry {
  subscriptionId: string;
  paymentId: string;
  expiresAt: Date;
}

/** Subscriptions that may start a charge: not final, and no attempt in flight (`processing`). */
const CHARGEABLE = `s.status IN ('created', 'success', 'delayed')`;
/** Pending results expire 24 hours after the attempt, authorizations 7 days after the authorization. */
const EXPIRES_AT = `CASE WHEN p.status = 'pending' THEN p.created_at + interval '24 hours'
  ELSE coalesce(p.payment_received_timestamp, p.created_at) + interval '7 days' END`;

export function billingRepository(db: Queryable) {
  return {
    /** The earliest charge due on or before `untilDate` on the time line, its subscription locked. */
    async claimNextCharge(testClockId: string | null, untilDate: string, options: { lock: boolean } = { lock: true }): Promise<DueCharge | undefined> {
      const { rows } = await db.query<DueCharge>(
        `SELECT s.subscription_id AS "subscriptionId", i.installment, i.next_attempt_on::text AS due
           FROM subscription_installments i JOIN subscriptions s ON s.subscription_id = i.subscription_id
          WHERE i.status IN ('scheduled', 'retrying') AND i.next_attempt_on <= $2::date AND ${CHARGEABLE}
            AND s.test_clock_id IS NOT DISTINCT FROM $1::uuid
          ORDER BY i.next_attempt_on, s.create_date, s.subscription_id, i.installment
          LIMIT 1${options.lock ? ' FOR UPDATE OF s SKIP LOCKED' : ''}`,
        [testClockId, untilDate],
      );
      return rows[0];
    },

    /** The earliest in-flight payment expired at `until` on the time line, its subscription locked. */
    async claimNextExpiry(testClockId: string | null, until: Date, options: { lock: boolean } = { lock: true }): Promise<DueExpiry | undefined> {
      const { rows } = await db.query<DueExpiry>(
        `SELECT s.subscription_id AS "subscriptionId", p.payment_id AS "paymentId", ${EXPIRES_AT} AS "expiresAt"
           FROM subscription_payments p JOIN subscriptions s ON s.subscription_id = p.subscription_id
          WHERE p.status IN ('pending', 'authorized') AND ${EXPIRES_AT} <= $2
            AND s.test_clock_id IS NOT DISTINCT FROM $1::uuid
          ORDER BY 3, s.create_date, s.subscription_id
          LIMIT 1${options.lock ? ' FOR UPDATE OF s SKIP LOCKED' : ''}`,
        [testClockId, until],
      );
      return rows[0] && { ...rows[0], expiresAt: new Date(rows[0].expiresAt) };
    },

    /** A subscription by id alone (the engine and the sandbox are not called by a seller). */
    async findSubscriptionById(subscriptionId: string, options: { forUpdate?: boolean } = {}): Promise<Pick<SubscriptionRow, 'subscriptionId' | 'sellerId'> | undefined> {
      const { rows } = await db.query<Pick<SubscriptionRow, 'subscriptionId' | 'sellerId'>>(
        `SELECT subscription_id AS "subscriptionId", seller_id AS "sellerId" FROM subscriptions WHERE subscription_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
        [subscriptionId],
      );
      return rows[0];
    },
  };
}
