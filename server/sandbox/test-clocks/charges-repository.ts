// SQL of the sandbox's view of a subscription's charges, and of its cancellation.
import type { Queryable } from '../../store/store.ts';
import type { PaymentStatus } from '../../subscription/repository.ts';

export interface AttemptRow {
  paymentId: string;
  installment: number;
  attempt: number;
  amount: number;
  currency: string;
  status: PaymentStatus;
  delayed: boolean;
  createdAt: Date;
}

export function chargesRepository(db: Queryable) {
  return {
    async attemptsOf(subscriptionId: string): Promise<AttemptRow[]> {
      const { rows } = await db.query<AttemptRow>(
        `SELECT payment_id AS "paymentId", installment, attempt, amount, currency, status, delayed, created_at AS "createdAt"
           FROM subscription_payments WHERE subscription_id = $1 ORDER BY installment, attempt`,
        [subscriptionId],
      );
      return rows;
    },

    /** Every installment not paid nor failed becomes void; answers how many. */
    async voidUnpaidInstallments(subscriptionId: string): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE subscription_installments SET status = 'void', next_attempt_on = NULL
          WHERE subscription_id = $1 AND status IN ('scheduled', 'retrying', 'processing')`,
        [subscriptionId],
      );
      return rowCount;
    },
  };
}
