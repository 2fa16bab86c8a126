// The one amount rule (MinorUnitAmount: int32, 0 to 2,147,483,647 minor units) from request to page to
// webhook to storage: the largest allowed amount is paid through every path (hosted checkout payment
// intent, payment link order, subscription charges on a test clock) with notifications configured
// and received, and one minor unit more is refused with a 4xx in the area's shape, never a 5xx.
import { ADMIN, startPlatformServer } from './support/server.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCheckoutNotification, verifyCheckoutNotification } from '../../client/webhooks/verify.ts';
import { notificationDeliveryWorker } from '../../server/notifications/delivery-worker.ts';
import { MAX_AMOUNT } from '../../server/http/amounts.ts';
import { createLogger } from '../../server/http/logging.ts';
import { loadPlatform } from '../support/contract.ts';
import type { TestServer } from './support/server.ts';
import { createLink, createSeller, product, STORES, type SandboxSeller } from './support/payment-link.ts';
import { buyerForm, cardForm, configureCheckout, createIntent, MERCHANT_CREDENTIALS, startMerchant, WC, type Merchant } from './support/checkout.ts';
import { createPlan, SUBSCRIPTIONS, subscribe, subscriptionBody, type TestSeller } from './support/recurrence.ts';

const until = async (check: () => Promise<boolean> | boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

const SHIPPING = 1500;

describe('the amount bound of the contract', () => {
  it('is MinorUnitAmount: int32, 0 to 2,147,483,647, the server\'s MAX_AMOUNT', () => {
    const schema = (loadPlatform() as any).components.schemas.MinorUnitAmount;
    expect(schema).toMatchObject({ type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 });
    expect(MAX_AMOUNT).toBe(schema.maximum);
    // A payment intent's amount repeats the rule with its own minimum of 1 (PaymentIntentPayment.yaml says why),
    // as a second allOf member in the bundles (scripts/contract/ref-siblings.ts).
    const amount = (loadPlatform() as any).components.schemas.PaymentIntentPayment.properties.amount;
    expect(amount.allOf).toEqual([{ $ref: '#/components/schemas/MinorUnitAmount' }, { type: schema.type, format: schema.format, minimum: 1, maximum: schema.maximum }]);
  });
});

describe.each(STORES)('the largest allowed amount on %s', (kind) => {
  let server: TestServer;
  let seller: SandboxSeller;
  let recurring: TestSeller;
  let merchant: Merchant;
  let worker: ReturnType<typeof notificationDeliveryWorker>;

  beforeAll(async () => {
    server = await startPlatformServer(kind);
    merchant = await startMerchant();
    seller = await createSeller(server);
    recurring = { sellerId: seller.sellerId, clientId: seller.clientId, country: 'BR', auth: { Authorization: `Bearer ${seller.token}` } };
    await configureCheckout(server, seller.token, merchant);
    worker = notificationDeliveryWorker({ store: server.store, logger: createLogger('silent'), config: { ...server.config, notificationPollIntervalMs: 10, notificationRetryBaseMs: 30 } });
    worker.start();
  });
  afterAll(async () => {
    await worker?.stop();
    await merchant?.close();
    await server?.close();
  });

  /** The notifications the merchant received (signature checked) whose payload matches. */
  const received = (match: (payload: any) => boolean) =>
    merchant.notifications.map((n) => verifyCheckoutNotification(n.headers, n.body, MERCHANT_CREDENTIALS) as any).filter(match);

  const noServerError = (res: { status: number }) => expect(res.status).toBeLessThan(500);

  describe('hosted checkout payment intent', () => {
    it('pays 2,147,483,647 and notifies it', async () => {
      const intent = await createIntent(server, seller.token, (body) => {
        body.payment.amount = MAX_AMOUNT;
      });
      const paid = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
      expect(paid.status).toBe(303);
      expect(paid.headers.location).toContain('/success');
      await until(() => received((p) => p.payment_intent_id === intent.payment_intent_id).length > 0);
      const [payload] = received((p) => p.payment_intent_id === intent.payment_intent_id);
      expect(validateCheckoutNotification(payload)).toBeTruthy();
      expect(payload.payment).toMatchObject({ amount: MAX_AMOUNT, result: { status: 'Authorized' } });
      const { rows } = await server.store.query<{ amount: string | number }>('SELECT amount FROM payment_intents WHERE payment_intent_id = $1', [intent.payment_intent_id]);
      expect(Number(rows[0]!.amount)).toBe(MAX_AMOUNT);
    });

    it('refuses one minor unit more with a 4xx in the web checkout error shape', async () => {
      const res = await server.http
        .post(`${WC}/payment-intent`)
        .set('Authorization', `Bearer ${seller.token}`)
        .send({ ...(await intentBody()), payment: { ...(await intentBody()).payment, amount: MAX_AMOUNT + 1 } });
      noServerError(res);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_error', message: expect.any(String) });
      expect(JSON.stringify(res.body.details)).toContain('payment.amount');
    });
  });

  describe('payment link order', () => {
    it('sells a link whose order total (Σ amount × quantity + shipping) is 2,147,483,647 and notifies it', async () => {
      const unit = (MAX_AMOUNT - SHIPPING - 1) / 2; // 1,073,740,823 × 2 + 1 + 1500
      const link = await createLink(server, seller.sellerId, {
        shipping_amount: SHIPPING,
        products: [product({ amount: unit, quantity: 2 }), product({ title: 'Taxa', amount: 1 })],
      });
      const bought = await server.http.post(`/pay/${link.short_id}`).type('form').send({ ...buyerForm(), ...cardForm() }).redirects(1);
      expect(bought.status).toBe(200);
      expect(bought.text).toContain('Payment authorized');
      const orderId = /order ([0-9a-f-]{36})/.exec(bought.text)![1]!;
      const order = await server.http.get(`/dpy/payment-link/v1/payment-links/${link.link_id}/orders/${orderId}`).set('Authorization', `Bearer ${seller.token}`);
      expect(order.status).toBe(200);
      expect(order.body).toMatchObject({ status: 'approved', amount: MAX_AMOUNT });
      await until(() => received((p) => p.order_id === orderId).length > 0);
      const [payload] = received((p) => p.order_id === orderId);
      expect(payload).toMatchObject({ mode: 'payment_link', payment: { amount: MAX_AMOUNT, result: { status: 'Authorized' } } });
    });

    it('refuses a link whose order total would be one minor unit more (422 in the sandbox shape), and an amount beyond the bound (400)', async () => {
      for (const overrides of [
        { shipping_amount: 1, products: [product({ amount: MAX_AMOUNT })] },
        { products: [product({ amount: 2 ** 30, quantity: 2 })] },
      ]) {
        const res = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: seller.sellerId, label: 'Link', type: 'custom', ...overrides });
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ error_code: 'validation_error', status_code: 422 });
        expect(res.body.message).toContain(`at most ${MAX_AMOUNT}`);
      }
      const beyond = await server.http
        .post('/sandbox/v1/payment-links')
        .set('Authorization', ADMIN)
        .send({ seller_id: seller.sellerId, label: 'Link', type: 'custom', products: [product({ amount: MAX_AMOUNT + 1 })] });
      expect(beyond.status).toBe(400);
      expect(beyond.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
    });
  });

  describe('subscription charges on a test clock', () => {
    it('charges 2,147,483,647 (installment + shippings) at creation and when the clock advances, and notifies both', async () => {
      const plan = await createPlan(server, recurring, { amount: MAX_AMOUNT - SHIPPING, sales_tax: MAX_AMOUNT - SHIPPING, period: { type: 'monthly', billing_cycle: 3 } });
      const who = '52998224725';
      const clock = await server.http.post('/sandbox/v1/test-clocks').set('Authorization', ADMIN).send({ seller_id: seller.sellerId, name: 'largest amount', frozen_time: '2026-01-10T09:00:00Z', customer_ids: [who] });
      expect(clock.status).toBe(201);
      const orderId = `MAX-${randomUUID().slice(0, 8)}`;
      const created = await subscribe(server, recurring, subscriptionBody(recurring, plan, { customer_id: who, order_id: orderId }));
      expect(created.payment).toMatchObject({ status: 'approved', amount: MAX_AMOUNT });
      const advanced = await server.http.post(`/sandbox/v1/test-clocks/${clock.body.test_clock_id}/advance`).set('Authorization', ADMIN).send({ frozen_time: '2026-02-11T00:00:00Z' });
      expect(advanced.status).toBe(200);
      expect(advanced.body.charges_run).toBe(1);
      const charges = await server.http.get(`/sandbox/v1/subscriptions/${created.subscription.subscription_id}/charges`).set('Authorization', ADMIN);
      expect(charges.status).toBe(200);
      const attempts = charges.body.installments.flatMap((i: any) => i.attempts);
      expect(attempts.map((a: any) => [a.status, a.amount])).toEqual([
        ['approved', MAX_AMOUNT],
        ['approved', MAX_AMOUNT],
      ]);
      await until(() => received((p) => p.mode === 'recurring' && p.order_id === orderId).length >= 2);
      for (const payload of received((p) => p.mode === 'recurring' && p.order_id === orderId)) {
        expect(payload).toMatchObject({ mode: 'recurring', payment: { amount: MAX_AMOUNT, result: { status: 'Authorized' } } });
      }
    });

    it('refuses a subscription or a floating change whose charge would be one minor unit more (422 in the recurrence shape)', async () => {
      const plan = await createPlan(server, recurring, { amount: MAX_AMOUNT - SHIPPING + 1 });
      const refused = await server.http.post(SUBSCRIPTIONS).set(recurring.auth).send(subscriptionBody(recurring, plan, { order_id: 'PED-MAX-1' }));
      noServerError(refused);
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ status_code: 422, message: expect.stringContaining(`at most ${MAX_AMOUNT}`), order_id: 'PED-MAX-1' });

      const fits = await createPlan(server, recurring, { amount: 1000 });
      const later = subscriptionBody(recurring, fits, { installment_start_date: '2036-01-05' });
      const subscription = await subscribe(server, recurring, later);
      const id = subscription.subscription.subscription_id;
      const floating = (amount: number) => server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/2`).set(recurring.auth).send({ new_amount: amount });
      const over = await floating(MAX_AMOUNT - SHIPPING + 1);
      expect(over.status).toBe(422);
      expect(over.body).toMatchObject({ status_code: 422, message: expect.stringContaining(`at most ${MAX_AMOUNT}`) });
      expect((await floating(MAX_AMOUNT - SHIPPING)).status).toBe(200);

      const beyond = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send({ ...planBodyOf(recurring), amount: MAX_AMOUNT + 1 });
      expect(beyond.status).toBe(400);
      expect(beyond.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
    });
  });
});

async function intentBody(): Promise<any> {
  const { contractExample } = await import('./support/web-checkout.ts');
  return contractExample('PaymentIntentRequestStandard');
}

function planBodyOf(seller: TestSeller) {
  return { seller_id: seller.sellerId, name: 'Plano', amount: 1000, currency: 'BRL', payment_types: 'credit_card', product_type: 'service', period: { type: 'monthly', billing_cycle: 12 } };
}
