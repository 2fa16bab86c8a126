// SQL of the notification outbox (migration 005).
import type { Queryable } from '../store/store.ts';

export interface DeliveryRow {
  delivery_id: string;
  seller_id: string;
  event: string;
  mode: string;
  payload: unknown;
  status: 'pending' | 'delivered' | 'abandoned';
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
  /** Until when an attempt in flight holds the delivery (its lease), if one does. */
  locked_until: Date | null;
  /** A sandbox redelivery was asked while an attempt was in flight: due again once it is recorded. */
  redelivery_requested: boolean;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  url: string | null;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

const jsonb = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
const delivery = (row: DeliveryRow): DeliveryRow => ({ ...row, payload: jsonb(row.payload) });

/** How many sellers with due deliveries one claim looks at (those whose oldest due delivery is oldest). */
const CANDIDATE_SELLERS = 64;
/**
 * Up to how many sellers with pending deliveries a claim finds one by one through the index (cheap
 * behind one seller's backlog of thousands); past that, it groups every due row (cheaper than a
 * descent per seller when many sellers have some).
 */
export const SKIPPED_SELLERS = 128;

/** How `claimDue` shares the leases between sellers. */
export interface ClaimFairness {
  /** The most attempts one seller may have running in the caller. */
  perSeller: number;
  /** The attempts the caller has running, by seller. */
  running: ReadonlyMap<string, number>;
  /** The most leases for sellers' further attempts (all but a first one of a seller with none running). */
  sharedLimit: number;
  /** When the caller last leased a delivery of each seller (ms): the least recently served go first. */
  served: Iterable<readonly [string, number]>;
}

export function notificationRepository(db: Queryable) {
  return {
    async insert(row: { deliveryId: string; sellerId: string; event: string; mode: string; payload: unknown; now: Date }) {
      await db.query(
        `INSERT INTO notification_deliveries (delivery_id, seller_id, event, mode, payload, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)`,
        [row.deliveryId, row.sellerId, row.event, row.mode, JSON.stringify(row.payload), row.now],
      );
      db.announce?.('notification-due'); // the worker need not wait for its next pass
    },

    /**
     * Leases up to `limit` due deliveries, oldest first, fairly between sellers (`fairness`): a seller
     * ends up with at most `perSeller` attempts running in the caller (`running` counts those it has),
     * and only the first attempt of a seller with none running may use more than `sharedLimit` of the
     * leases, so the room above it stays for sellers whose endpoints are not already busy. Sellers
     * take turns: of the CANDIDATE_SELLERS sellers that can still take one, least recently `served`
     * first (then oldest due delivery first), the oldest `perSeller` due rows of each are locked with
     * `FOR UPDATE SKIP LOCKED` (so one seller's backlog cannot fill the window, and concurrent workers,
     * other instances on one PostgreSQL, never wait on each other nor lease one row twice); every
     * seller's first row is chosen before any seller's second, and so on, in the same turn order. The
     * lease keeps others off while the HTTP call runs outside the transaction, and expires if this
     * worker dies mid-attempt.
     *
     * What a pass costs (bench/delivery-claim.ts): with nothing due, one probe of the due index and no
     * claim. Otherwise the sellers with due deliveries are found one by one through the (seller_id,
     * next_attempt_at) index, one descent per seller with pending deliveries whatever its backlog (a
     * skip scan), while there are at most SKIPPED_SELLERS of them; past that, by grouping every due row.
     * A seller's due rows are read by `seller_id >= $x AND seller_id <= $x`, ordered by seller then
     * due time, not by `seller_id = $x`: with the equality, both planners walked the due index of
     * every seller's rows and filtered on the seller (behind one seller's 50,000, eight other sellers
     * with one due each cost 1.3 s a pass on PGlite, 0.8 s on PostgreSQL; an attacker review); the
     * range and order lead them to the (seller_id, next_attempt_at) index.
     */
    async claimDue(now: Date, leaseMs: number, limit: number, fairness: Partial<ClaimFairness> = {}): Promise<DeliveryRow[]> {
      const perSeller = fairness.perSeller ?? limit;
      const running = fairness.running ?? new Map<string, number>();
      const sharedLimit = Math.min(fairness.sharedLimit ?? limit, limit);
      const served = [...(fairness.served ?? [])];
      // Sellers that can take nothing more: those at perSeller, and every busy one once the shared room is gone.
      const full = [...running].filter(([, n]) => n >= perSeller || (sharedLimit <= 0 && n > 0)).map(([seller]) => seller);
      const { rows: anyDue } = await db.query(
        `SELECT 1 FROM notification_deliveries WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
          ORDER BY next_attempt_at LIMIT 1`,
        [now],
      );
      if (!anyDue.length) return [];
      const { rows } = await db.query<DeliveryRow>(
        `WITH RECURSIVE pending_sellers(seller_id, n) AS (
           (SELECT seller_id, 1 FROM notification_deliveries WHERE status = 'pending' ORDER BY seller_id, next_attempt_at LIMIT 1)
           UNION ALL
           SELECT (SELECT d.seller_id FROM notification_deliveries d
                    WHERE d.status = 'pending' AND d.seller_id > p.seller_id ORDER BY d.seller_id, d.next_attempt_at LIMIT 1), p.n + 1
             FROM pending_sellers p WHERE p.seller_id IS NOT NULL AND p.n <= $12),
         many AS (SELECT count(seller_id) > $12 AS yes FROM pending_sellers),
         due AS (
           SELECT p.seller_id, o.oldest FROM pending_sellers p CROSS JOIN LATERAL (
             SELECT d.next_attempt_at AS oldest FROM notification_deliveries d
              WHERE d.seller_id >= p.seller_id AND d.seller_id <= p.seller_id AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.locked_until IS NULL OR d.locked_until <= $1)
              ORDER BY d.seller_id, d.next_attempt_at LIMIT 1) o
            WHERE p.seller_id IS NOT NULL AND NOT (SELECT yes FROM many)
           UNION ALL
           SELECT seller_id, min(next_attempt_at) FROM notification_deliveries
            WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1) AND (SELECT yes FROM many)
            GROUP BY seller_id),
         due_sellers AS (
           SELECT due.seller_id, coalesce(v.served, 0) AS served FROM due
           LEFT JOIN unnest($10::uuid[], $11::float8[]) AS v(seller_id, served) ON v.seller_id = due.seller_id
            WHERE due.seller_id <> ALL($5::uuid[])
            ORDER BY coalesce(v.served, 0), due.oldest
            LIMIT $6),
         free AS (
           SELECT f.*, s.served FROM due_sellers s CROSS JOIN LATERAL (
             SELECT delivery_id, seller_id, next_attempt_at, created_at FROM notification_deliveries d
              WHERE d.seller_id >= s.seller_id AND d.seller_id <= s.seller_id AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.locked_until IS NULL OR d.locked_until <= $1)
              ORDER BY d.seller_id, d.next_attempt_at, d.created_at
              LIMIT $4
              FOR UPDATE SKIP LOCKED) f),
         ranked AS (
           SELECT f.delivery_id, f.next_attempt_at, f.created_at, f.served,
                  coalesce(r.running, 0) + row_number() OVER (PARTITION BY f.seller_id ORDER BY f.next_attempt_at, f.created_at, f.delivery_id) AS slot
             FROM free f LEFT JOIN unnest($7::uuid[], $8::int[]) AS r(seller_id, running) ON r.seller_id = f.seller_id),
         counted AS (
           SELECT delivery_id, slot, served, next_attempt_at, created_at,
                  count(*) FILTER (WHERE slot > 1) OVER (ORDER BY slot, served, next_attempt_at, created_at, delivery_id ROWS UNBOUNDED PRECEDING) AS shared
             FROM ranked WHERE slot <= $4),
         chosen AS (
           SELECT delivery_id FROM counted
            WHERE slot = 1 OR shared <= $9
            ORDER BY slot, served, next_attempt_at, created_at, delivery_id
            LIMIT $3)
         UPDATE notification_deliveries d SET locked_until = $2 FROM chosen WHERE d.delivery_id = chosen.delivery_id
         RETURNING d.*`,
        [now, new Date(now.getTime() + leaseMs), limit, perSeller, full, CANDIDATE_SELLERS, [...running.keys()], [...running.values()], Math.max(0, sharedLimit), served.map(([seller]) => seller), served.map(([, at]) => at), SKIPPED_SELLERS],
      );
      return rows.map(delivery);
    },

    /** Gives back the lease of an attempt that was not made to its end (the worker stopped): the delivery is due again at once. */
    async releaseLease(deliveryId: string, lease: Date): Promise<void> {
      await db.query(`UPDATE notification_deliveries SET locked_until = NULL WHERE delivery_id = $1 AND locked_until = $2 AND status = 'pending'`, [deliveryId, lease]);
    },

    /**
     * Records the result of an attempt made under `lease` (the `locked_until` its claim set) and moves
     * the delivery on, in one transaction of the caller's: the row is locked first, the attempt
     * numbered from the count recorded under that lock. Only the holder of the lease moves the
     * delivery: an attempt whose lease expired and was taken by another worker is recorded, and the
     * other worker's result decides. A redelivery asked during the attempt makes the delivery due at
     * `now` whatever the result. Undefined when the delivery is gone (a sandbox reset).
     */
    async recordResult(
      deliveryId: string,
      lease: Date,
      attempt: Omit<AttemptRow, 'delivery_id' | 'attempt'>,
      next: (attempts: number) => { status: 'delivered' } | { status: 'abandoned' } | { status: 'pending'; at: Date },
      now: Date,
    ): Promise<number | undefined> {
      const { rows } = await db.query<{ attempts: number; held: boolean; redelivery_requested: boolean }>(
        `SELECT attempts, locked_until IS NOT DISTINCT FROM $2::timestamptz AS held, redelivery_requested
           FROM notification_deliveries WHERE delivery_id = $1 FOR UPDATE`,
        [deliveryId, lease],
      );
      const row = rows[0];
      if (!row) return undefined;
      const number = row.attempts + 1;
      await db.query(
        `INSERT INTO notification_attempts (delivery_id, attempt, started_at, url, status_code, latency_ms, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [deliveryId, number, attempt.started_at, attempt.url, attempt.status_code, attempt.latency_ms, attempt.error],
      );
      const then = !row.held ? undefined : row.redelivery_requested ? ({ status: 'pending', at: now } as const) : next(number);
      if (then === undefined) {
        await db.query(`UPDATE notification_deliveries SET attempts = $2 WHERE delivery_id = $1`, [deliveryId, number]);
      } else {
        await db.query(
          `UPDATE notification_deliveries
              SET attempts = $2, status = $3, next_attempt_at = coalesce($4, next_attempt_at), delivered_at = $5,
                  locked_until = NULL, redelivery_requested = false
            WHERE delivery_id = $1`,
          [deliveryId, number, then.status, then.status === 'pending' ? then.at : null, then.status === 'delivered' ? now : null],
        );
        if (row.redelivery_requested) db.announce?.('notification-due');
      }
      return number;
    },

    /**
     * Makes a delivery due now again (a sandbox redelivery), whatever its status. While an attempt is
     * in flight (its lease not expired) the lease stays and the request is noted: that attempt is
     * recorded first, then the delivery is due.
     */
    async redeliver(sellerId: string, deliveryId: string, now: Date): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE notification_deliveries
            SET status = 'pending', next_attempt_at = $3, delivered_at = NULL,
                redelivery_requested = coalesce(locked_until > $3, false),
                locked_until = CASE WHEN locked_until > $3 THEN locked_until END
          WHERE delivery_id = $1 AND seller_id = $2`,
        [deliveryId, sellerId, now],
      );
      if (rowCount === 1) db.announce?.('notification-due');
      return rowCount === 1;
    },

    async find(sellerId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
      const { rows } = await db.query<DeliveryRow>(`SELECT * FROM notification_deliveries WHERE delivery_id = $1 AND seller_id = $2`, [
        deliveryId,
        sellerId,
      ]);
      return rows[0] && delivery(rows[0]);
    },

    /** Any seller's delivery (the sandbox's delivery log, behind the administration token). */
    async findById(deliveryId: string): Promise<DeliveryRow | undefined> {
      const { rows } = await db.query<DeliveryRow>(`SELECT * FROM notification_deliveries WHERE delivery_id = $1`, [deliveryId]);
      return rows[0] && delivery(rows[0]);
    },

    /**
     * A page of the seller's deliveries, newest first (ties by id, descending), in `status` only if
     * given, after the seller's delivery `before` only if given; undefined when `before` is not one
     * of the seller's deliveries. `hasMore`: older ones follow.
     */
    async pageForSeller(
      sellerId: string,
      page: { limit: number; before?: string; status?: DeliveryRow['status'] },
    ): Promise<{ deliveries: DeliveryRow[]; hasMore: boolean } | undefined> {
      const { rows } = await db.query<DeliveryRow>(
        `WITH cursor AS (SELECT created_at, delivery_id FROM notification_deliveries WHERE delivery_id = $3 AND seller_id = $1)
         SELECT d.* FROM notification_deliveries d
          WHERE d.seller_id = $1
            AND ($4::text IS NULL OR d.status = $4)
            AND ($3::uuid IS NULL OR (d.created_at, d.delivery_id) < (SELECT created_at, delivery_id FROM cursor))
          ORDER BY d.created_at DESC, d.delivery_id DESC
          LIMIT $2`,
        [sellerId, page.limit + 1, page.before ?? null, page.status ?? null],
      );
      if (page.before !== undefined && rows.length === 0) {
        const known = await db.query(`SELECT 1 FROM notification_deliveries WHERE delivery_id = $1 AND seller_id = $2`, [page.before, sellerId]);
        if (known.rows.length === 0) return undefined;
      }
      return { deliveries: rows.slice(0, page.limit).map(delivery), hasMore: rows.length > page.limit };
    },

    /** The seller's newest `limit` deliveries, newest first. */
    async listForSeller(sellerId: string, limit = 100): Promise<DeliveryRow[]> {
      return (await this.pageForSeller(sellerId, { limit }))!.deliveries;
    },

    /**
     * Deletes at most `limit` deliveries that are over (delivered or abandoned) and whose last news is
     * older than `before`: their delivery, else their last attempt, else their creation. Their
     * attempts go with them (ON DELETE CASCADE). A pending one never. The row's own columns are
     * checked again on the row deleted (PostgreSQL re-evaluates only those when another transaction
     * changed it meanwhile, not the subquery's): one a redelivery made pending, or that a redelivery
     * then delivered or gave up meanwhile (its next_attempt_at is the redelivery's time), stays.
     * Returns how many went.
     */
    async deleteFinishedBefore(before: Date, limit: number): Promise<number> {
      const { rowCount } = await db.query(
        `DELETE FROM notification_deliveries
          WHERE status <> 'pending' AND greatest(delivered_at, next_attempt_at) < $1
            AND delivery_id IN (
              SELECT d.delivery_id FROM notification_deliveries d
               WHERE d.status <> 'pending'
                 AND coalesce(d.delivered_at, (SELECT max(a.started_at) FROM notification_attempts a WHERE a.delivery_id = d.delivery_id), d.created_at) < $1
               LIMIT $2)`,
        [before, limit],
      );
      return rowCount;
    },

    async attemptsOf(deliveryId: string): Promise<AttemptRow[]> {
      const { rows } = await db.query<AttemptRow>(`SELECT * FROM notification_attempts WHERE delivery_id = $1 ORDER BY attempt`, [deliveryId]);
      return rows;
    },
  };
}
