// SQL of recurrence plans, the sellers' Recurrence product flag and the recurrence audit trail.
import type { components } from '../http/contract.ts';
import { isoSeconds } from '../http/time.ts';
import { instantAsEpochMs, type Queryable } from '../store/store.ts';

export type Plan = components['schemas']['Plan'];
export type PlanStatus = components['schemas']['PlanStatus'];
/** A stored plan: every field the contract lists is present. */
export type StoredPlan = Required<Omit<Plan, 'description' | 'sales_tax' | 'product_type' | 'floating_data'>> &
  Pick<Plan, 'description' | 'sales_tax' | 'product_type'> & { floating_data: NonNullable<Plan['floating_data']> };

export interface RecurrenceSeller {
  sellerId: string;
  country: string;
  /** The currencies the seller sells in; a plan's is one of them. */
  currencies: string[];
  recurrenceEnabled: boolean;
}

/** A plan as its columns read. */
export interface PlanRow {
  plan_id: string;
  seller_id: string;
  name: string;
  description: string | null;
  amount: number;
  currency: string;
  payment_types: StoredPlan['payment_types'];
  sales_tax: number | null;
  product_type: StoredPlan['product_type'] | null;
  period_type: StoredPlan['period']['type'];
  billing_cycle: number;
  specific_cycle_in_days: number | null;
  floating_data: StoredPlan['floating_data'];
  status: PlanStatus;
  /** A Date from the driver; milliseconds since the epoch from planJson. */
  create_date: Date | number;
}

export function planOf(row: PlanRow): StoredPlan {
  return {
    seller_id: row.seller_id,
    plan_id: row.plan_id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    amount: row.amount,
    currency: row.currency,
    payment_types: row.payment_types,
    ...(row.sales_tax !== null ? { sales_tax: row.sales_tax } : {}),
    ...(row.product_type !== null ? { product_type: row.product_type } : {}),
    create_date: isoSeconds(row.create_date),
    status: row.status,
    period: {
      type: row.period_type,
      billing_cycle: row.billing_cycle,
      ...(row.period_type === 'specific' && row.specific_cycle_in_days !== null ? { specific_cycle_in_days: row.specific_cycle_in_days } : {}),
    },
    floating_data: row.floating_data,
  };
}

const PLAN_FIELDS = `plan_id, seller_id, name, description, amount, currency, payment_types, sales_tax, product_type,
  period_type, billing_cycle, specific_cycle_in_days, floating_data, status`;
const PLAN_COLUMNS = `${PLAN_FIELDS}, create_date`;

/**
 * SQL of the seller's plan as one JSON object of its columns (a PlanRow; NULL when there is none),
 * for a statement that reads a plan with what refers to it. `sellerId` and `planId` are SQL
 * expressions of that statement (column references), never values.
 */
export const planJson = (sellerId: string, planId: string) =>
  `(SELECT row_to_json(p) FROM (SELECT ${PLAN_FIELDS}, ${instantAsEpochMs('create_date')} AS create_date FROM plans
     WHERE plan_id = ${planId} AND seller_id = ${sellerId}) p)`;

export function planRepository(db: Queryable) {
  return {
    async findSeller(sellerId: string): Promise<RecurrenceSeller | undefined> {
      const { rows } = await db.query<RecurrenceSeller>(
        `SELECT seller_id AS "sellerId", country, currencies, recurrence_enabled AS "recurrenceEnabled" FROM sellers WHERE seller_id = $1`,
        [sellerId],
      );
      return rows[0];
    },

    async insertPlan(plan: StoredPlan): Promise<void> {
      await db.query(
        `INSERT INTO plans (${PLAN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        [
          plan.plan_id,
          plan.seller_id,
          plan.name,
          plan.description ?? null,
          plan.amount,
          plan.currency,
          plan.payment_types,
          plan.sales_tax ?? null,
          plan.product_type ?? null,
          plan.period.type,
          plan.period.billing_cycle,
          plan.period.specific_cycle_in_days ?? null,
          JSON.stringify(plan.floating_data),
          plan.status,
          plan.create_date,
        ],
      );
    },

    /** The seller's plan; another seller's plan is as unknown as a missing one. */
    async findPlan(sellerId: string, planId: string, options: { forUpdate?: boolean } = {}): Promise<StoredPlan | undefined> {
      const { rows } = await db.query<PlanRow>(
        `SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_id = $1 AND seller_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
        [planId, sellerId],
      );
      return rows[0] && planOf(rows[0]);
    },

    async setPlanStatus(sellerId: string, planId: string, status: PlanStatus): Promise<void> {
      await db.query('UPDATE plans SET status = $3 WHERE plan_id = $1 AND seller_id = $2', [planId, sellerId, status]);
    },

    /** The `username` header (or the client id) of a change, for audit only. */
    async recordAudit(entry: { sellerId: string; actor: string; clientId: string; action: string; objectId: string }): Promise<void> {
      await db.query('INSERT INTO recurrence_audit (seller_id, actor, client_id, action, object_id) VALUES ($1, $2, $3, $4, $5)', [
        entry.sellerId,
        entry.actor,
        entry.clientId,
        entry.action,
        entry.objectId,
      ]);
    },
  };
}

export type PlanRepository = ReturnType<typeof planRepository>;
