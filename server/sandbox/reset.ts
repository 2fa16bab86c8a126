// A sandbox back to its fresh state in one transaction: every object any seller made is gone, the
// demo seller (its seller, client and link defaults) and the signing keys are kept, so its
// credentials and the tokens already issued to it keep working. What a test suite calls between
// tests (startSandbox's `reset()`).
import type { Store } from '../store/store.ts';
import { DEMO_SELLER_ID } from './demo-seller.ts';

/** Tables that outlive a reset: the migrations' record and the signing keys, whole. */
const KEPT = new Set(['schema_migrations', 'signing_keys']);
/** Tables where only the demo seller's rows outlive a reset, children before parents. */
const DEMO_ROWS = ['business_configurations', 'api_clients', 'sellers'];

export async function resetSandbox(store: Store): Promise<void> {
  const { rows } = await store.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename");
  const cleared = rows.map((r) => r.tablename).filter((t) => !KEPT.has(t) && !DEMO_ROWS.includes(t));
  await store.transaction(async (tx) => {
    if (cleared.length) await tx.query(`TRUNCATE ${cleared.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY`);
    for (const table of DEMO_ROWS) await tx.query(`DELETE FROM "${table}" WHERE seller_id <> $1`, [DEMO_SELLER_ID]);
  });
}
