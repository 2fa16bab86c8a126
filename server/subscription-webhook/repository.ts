// SQL of applied payment events, keyed by (seller, idempotency key).
import type { Queryable } from '../store/store.ts';

export interface StoredEvent {
  eventName: string;
  eventId: string;
  paymentId: string;
  status: string;
  /** The 200 answered, as sent (JSON text); null while the first call is still running. */
  response: string | null;
}

/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_DAYS = 30;

export function subscriptionEventRepository(db: Queryable) {
  return {
    /** A key older than the retention period is forgotten, so it may be used again. */
    async forgetExpiredKey(sellerId: string, key: string, now: Date): Promise<void> {
      await db.query(
        `DELETE FROM subscription_events WHERE seller_id = $1 AND idempotency_key = $2 AND applied_at < $3::timestamptz - make_interval(days => $4)`,
        [sellerId, key, now, IDEMPOTENCY_KEY_DAYS],
      );
    },

    /**
     * Claims the key: true when this call is the first. The primary key makes a concurrent second
     * call wait for the first's transaction, then find the key taken (or free, if it rolled back).
     */
    async claimKey(sellerId: string, key: string, event: Omit<StoredEvent, 'response'>, appliedAt: Date): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO subscription_events (seller_id, idempotency_key, event_name, event_id, payment_id, status, applied_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (seller_id, idempotency_key) DO NOTHING`,
        [sellerId, key, event.eventName, event.eventId, event.paymentId, event.status, appliedAt],
      );
      return rowCount === 1;
    },

    async findEvent(sellerId: string, key: string): Promise<StoredEvent | undefined> {
      const { rows } = await db.query<StoredEvent>(
        `SELECT event_name AS "eventName", event_id::text AS "eventId", payment_id::text AS "paymentId", status, response
           FROM subscription_events WHERE seller_id = $1 AND idempotency_key = $2`,
        [sellerId, key],
      );
      return rows[0];
    },

    async saveResponse(sellerId: string, key: string, response: string): Promise<void> {
      await db.query('UPDATE subscription_events SET response = $3 WHERE seller_id = $1 AND idempotency_key = $2', [sellerId, key, response]);
    },
  };
}
