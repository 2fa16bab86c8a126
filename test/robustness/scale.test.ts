// Horizontal scale: two server instances on one PostgreSQL (only when DATABASE_URL is set), the same
// buyers on both. Concurrent payment link checkouts never sell past max_orders nor record an order
// twice, and two delivery workers (one per instance) deliver each notification exactly once. The
// billing suite already proves charges on two instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationTargetOf } from '../../server/notifications/delivery-worker.ts';
import { createLogger } from '../../server/http/logging.ts';
import { createDeliveryWorker } from '../../server/notifications/delivery.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { buyerForm, cardForm, configureCheckout, startMerchant, type Merchant } from '../server/support/checkout.ts';
import { createLink, createSeller, type SandboxSeller } from '../server/support/payment-link.ts';
import { CapturedLogs, startTestServer, type TestServer } from '../server/support/server.ts';
import { DATABASE_URL, freshPostgresSchema } from '../server/support/stores.ts';

const BUYERS = 12;
const MAX_ORDERS = 3;

describe.skipIf(!DATABASE_URL)('two instances on one PostgreSQL', () => {
  let a: TestServer;
  let b: TestServer;
  let seller: SandboxSeller;
  let merchant: Merchant;

  beforeAll(async () => {
    const open = await freshPostgresSchema();
    a = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await open() });
    b = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await open() });
    seller = await createSeller(a);
    merchant = await startMerchant();
    await configureCheckout(b, seller.token, merchant);
  });
  afterAll(async () => {
    await merchant?.close();
    await a?.close();
    await b?.close();
  });

  it('sells at most max_orders of one link across both instances, each order once, each notification once', async () => {
    const link = await createLink(a, seller.sellerId, { max_orders: MAX_ORDERS });
    const buys = await Promise.all(
      Array.from({ length: BUYERS }, (_, i) =>
        (i % 2 ? a : b).http.post(`/pay/${link.short_id}`).type('form').send({ ...buyerForm(), ...cardForm() }).redirects(1), // to the result page
      ),
    );
    const authorized = buys.filter((r) => r.status === 200 && r.text.includes('Payment authorized'));
    expect(authorized).toHaveLength(MAX_ORDERS);
    for (const r of buys.filter((r) => !authorized.includes(r))) {
      expect(r.status).toBe(410);
      // Sold out at the page check, or (lost the race for the lock) no longer taking payments.
      expect(r.text).toMatch(/This payment link is sold out\.|This payment link is no longer taking payments\./);
    }
    const orderIds = authorized.map((r) => /order ([0-9a-f-]{36})/.exec(r.text)![1]!);
    expect(new Set(orderIds).size).toBe(MAX_ORDERS);
    const orders = await a.store.query<{ order_id: string; status: string }>('SELECT order_id, status FROM payment_link_orders WHERE link_id = $1', [link.link_id]);
    expect(orders.rows.filter((o) => o.status === 'approved').map((o) => o.order_id).sort()).toEqual([...orderIds].sort());
    const sales = await b.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${link.short_id}`);
    expect(sales.body.successful_sales).toBe(MAX_ORDERS);

    // One delivery worker per instance, passes run at once on both.
    const logger = createLogger('info', new CapturedLogs());
    const workers = [a, b].map((s) => createDeliveryWorker({ store: s.store, logger, resolveTarget: notificationTargetOf(s.store, true), batchSize: 2 }));
    for (let pass = 0; pass < 10; pass++) {
      const done = await Promise.all(workers.map((w) => w.runOnce()));
      if (done.every((n) => n === 0)) break;
    }
    const received = merchant.notifications.map((n) => JSON.parse(n.body).order_id as string).filter((id) => orderIds.includes(id));
    expect(received.sort()).toEqual([...orderIds].sort()); // each order's notification exactly once
    const pending = await a.store.query(`SELECT 1 FROM notification_deliveries WHERE status <> 'delivered'`);
    expect(pending.rowCount).toBe(0);
  }, 60_000);
});
