// SQL of sandbox test clocks (migration 008): clocks, their customers, their subscriptions. Beside the
// subscription code because a subscription lives on its customer's clock from its creation; the
// sandbox's test clock operations (sandbox/test-clocks/) read and move them.
import type { Queryable } from '../store/store.ts';

export interface TestClockRow {
  testClockId: string;
  sellerId: string;
  name: string | null;
  frozenTime: Date;
  createdAt: Date;
}

const COLUMNS = `test_clock_id AS "testClockId", seller_id AS "sellerId", name, frozen_time AS "frozenTime", created_at AS "createdAt"`;

export function testClockRepository(db: Queryable) {
  return {
    /**
     * Inserts the clock and attaches the customers; answers the customers that could not be attached
     * because they already live on another clock of the seller (the primary key decides, so two
     * clocks created at once cannot both take one customer).
     */
    async insertClock(clock: TestClockRow, customerIds: readonly string[]): Promise<string[]> {
      await db.query(`INSERT INTO test_clocks (test_clock_id, seller_id, name, frozen_time, created_at) VALUES ($1, $2, $3, $4, $5)`, [
        clock.testClockId, clock.sellerId, clock.name, clock.frozenTime, clock.createdAt,
      ]);
      const taken: string[] = [];
      for (const [position, customerId] of customerIds.entries()) {
        const { rowCount } = await db.query(
          `INSERT INTO test_clock_customers (seller_id, customer_id, test_clock_id, position) VALUES ($1, $2, $3, $4)
           ON CONFLICT (seller_id, customer_id) DO NOTHING`,
          [clock.sellerId, customerId, clock.testClockId, position],
        );
        if (rowCount === 0) taken.push(customerId);
      }
      return taken;
    },

    /** Which of these customers of the seller are already on a clock, and on which. */
    async clocksOfCustomers(sellerId: string, customerIds: readonly string[]): Promise<Array<{ customerId: string; testClockId: string }>> {
      const { rows } = await db.query<{ customerId: string; testClockId: string }>(
        `SELECT customer_id AS "customerId", test_clock_id AS "testClockId" FROM test_clock_customers WHERE seller_id = $1 AND customer_id = ANY($2::text[])`,
        [sellerId, customerIds],
      );
      return rows;
    },

    /** The clock a customer of the seller lives on, if any. */
    async clockOfCustomer(sellerId: string, customerId: string): Promise<TestClockRow | undefined> {
      const { rows } = await db.query<TestClockRow>(
        `SELECT ${COLUMNS} FROM test_clocks WHERE test_clock_id = (SELECT test_clock_id FROM test_clock_customers WHERE seller_id = $1 AND customer_id = $2)`,
        [sellerId, customerId],
      );
      return rows[0];
    },

    async findClock(testClockId: string): Promise<TestClockRow | undefined> {
      const { rows } = await db.query<TestClockRow>(`SELECT ${COLUMNS} FROM test_clocks WHERE test_clock_id = $1`, [testClockId]);
      return rows[0];
    },

    async customersOf(testClockId: string): Promise<string[]> {
      const { rows } = await db.query<{ customer_id: string }>(`SELECT customer_id FROM test_clock_customers WHERE test_clock_id = $1 ORDER BY position`, [testClockId]);
      return rows.map((r) => r.customer_id);
    },

    async subscriptionsOf(testClockId: string): Promise<string[]> {
      const { rows } = await db.query<{ subscription_id: string }>(
        `SELECT subscription_id FROM subscriptions WHERE test_clock_id = $1 ORDER BY create_date, subscription_id`,
        [testClockId],
      );
      return rows.map((r) => r.subscription_id);
    },

    /** Moves the clock forward only: two advances at once leave it at the later time. */
    async moveClock(testClockId: string, to: Date): Promise<void> {
      await db.query(`UPDATE test_clocks SET frozen_time = GREATEST(frozen_time, $2) WHERE test_clock_id = $1`, [testClockId, to]);
    },

    /** The clock time of a subscription on a clock. */
    async timeOfSubscription(subscriptionId: string): Promise<Date | undefined> {
      const { rows } = await db.query<{ frozen_time: Date }>(
        `SELECT c.frozen_time FROM subscriptions s JOIN test_clocks c ON c.test_clock_id = s.test_clock_id WHERE s.subscription_id = $1`,
        [subscriptionId],
      );
      return rows[0]?.frozen_time;
    },
  };
}
