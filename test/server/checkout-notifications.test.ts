// Merchant notifications of hosted checkout payments as the server delivers them (the worker main.ts
// runs, with a fast retry policy), and the sandbox delivery log operations, on every store kind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckoutNotification } from '../../client/webhooks/verify.ts';
import { notificationDeliveryWorker, retryPolicyOf } from '../../server/checkout/notification-delivery.ts';
import { createLogger } from '../../server/http/logging.ts';
import { CONTRACT_RETRY_POLICY } from '../../server/notifications/retry-policy.ts';
import type { TestServer } from './support/server.ts';
import { ADMIN, createSeller, startPlatformServer, STORES, type SandboxSeller } from './support/payment-link.ts';
import { cardForm, configureCheckout, createIntent, MERCHANT_CREDENTIALS, startMerchant, type Merchant } from './support/checkout.ts';

const until = async (check: () => Promise<boolean> | boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('retry policy of the server', () => {
  it('is the contract policy, its delays scaled by NOTIFICATION_RETRY_BASE_MS', () => {
    expect(retryPolicyOf({ notificationRetryBaseMs: 30_000 })).toEqual(CONTRACT_RETRY_POLICY);
    expect(retryPolicyOf({ notificationRetryBaseMs: 30 })).toEqual({ ...CONTRACT_RETRY_POLICY, baseDelayMs: 30, maxDelayMs: 3_600 });
  });
});

for (const kind of STORES) {
  describe(`notification delivery and the sandbox delivery log on ${kind}`, () => {
    let server: TestServer;
    let seller: SandboxSeller;
    let merchant: Merchant;
    let worker: ReturnType<typeof notificationDeliveryWorker>;

    beforeAll(async () => {
      server = await startPlatformServer(kind);
      merchant = await startMerchant([500, 500]); // the first notification fails twice, then 200
      seller = await createSeller(server);
      await configureCheckout(server, seller.token, merchant);
    });
    afterAll(async () => {
      await worker?.stop();
      await merchant?.close();
      await server?.close();
    });

    const list = () => server.http.get(`/sandbox/v1/notifications?seller_id=${seller.sellerId}`).set('Authorization', ADMIN);

    it('a receiver answering 500 twice then 200 gets the same notification three times and nothing after; the log lists the attempts', async () => {
      worker = notificationDeliveryWorker({ store: server.store, logger: createLogger('silent'), config: { ...server.config, notificationPollIntervalMs: 10, notificationRetryBaseMs: 30 } });
      const intent = await createIntent(server, seller.token);
      const paid = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
      expect(paid.status).toBe(303);
      worker.start();
      await until(() => merchant.notifications.length >= 3);
      await new Promise((r) => setTimeout(r, 300)); // time for a wrong 4th attempt
      expect(merchant.notifications).toHaveLength(3);
      expect(new Set(merchant.notifications.map((n) => n.body)).size).toBe(1);
      for (const n of merchant.notifications) {
        expect(n.path).toBe('/');
        expect(n.headers['content-type']).toBe('application/json');
        expect(verifyCheckoutNotification(n.headers, n.body, MERCHANT_CREDENTIALS).payment_intent_id).toBe(intent.payment_intent_id);
      }
      const res = await list();
      expect(res.status).toBe(200);
      const [delivery] = res.body.deliveries;
      expect(delivery).toMatchObject({ seller_id: seller.sellerId, event: 'checkout-notification', mode: 'instant', status: 'delivered' });
      expect(delivery.payload).toEqual(JSON.parse(merchant.notifications[0]!.body));
      expect(delivery.next_attempt_at).toBeUndefined();
      expect(delivery.attempts.map((a: any) => [a.attempt, a.status_code, a.error ?? null, a.url])).toEqual([
        [1, 500, 'answered 500, not 200', `${merchant.url}/`],
        [2, 500, 'answered 500, not 200', `${merchant.url}/`],
        [3, 200, null, `${merchant.url}/`],
      ]);

      const one = await server.http.get(`/sandbox/v1/notifications/${delivery.delivery_id}`).set('Authorization', ADMIN);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(delivery);

      const again = await server.http.post(`/sandbox/v1/notifications/${delivery.delivery_id}/redeliver`).set('Authorization', ADMIN);
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ delivery_id: delivery.delivery_id, status: 'pending', attempts: delivery.attempts });
      expect(again.body.delivered_at).toBeUndefined();
      await until(() => merchant.notifications.length === 4);
      await until(async () => (await list()).body.deliveries[0].status === 'delivered');
      expect(merchant.notifications[3]!.body).toBe(merchant.notifications[0]!.body);
      await worker.stop();
    });

    it('a URL the rule no longer allows is an attempt error, not a send', async () => {
      const strict = notificationDeliveryWorker({ store: server.store, logger: createLogger('silent'), config: { ...server.config, allowPrivateNotificationUrls: false } });
      const intent = await createIntent(server, seller.token);
      await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
      const before = merchant.notifications.length;
      expect(await strict.runOnce()).toBe(1);
      expect(merchant.notifications).toHaveLength(before);
      const delivery = (await list()).body.deliveries.find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id);
      expect(delivery.status).toBe('pending');
      expect(delivery.attempts).toEqual([
        expect.objectContaining({ attempt: 1, url: `${merchant.url}/`, latency_ms: 0, error: 'notification URL refused: must not point to a loopback, private or link-local address' }),
      ]);
      expect(delivery.attempts[0].status_code).toBeUndefined();
    });

    it('answers the sandbox errors in the sandbox shape', async () => {
      const cases: Array<[any, number, object]> = [
        [server.http.get(`/sandbox/v1/notifications?seller_id=${seller.sellerId}`), 401, { error_code: 'unauthorized', message: 'Missing or wrong sandbox administration token', status_code: 401 }],
        [server.http.get('/sandbox/v1/notifications?seller_id=0f6d3c1e-4b7a-4c55-9a0e-2f1b7d9c8e41').set('Authorization', ADMIN), 404, { error_code: 'seller_not_found', message: 'Seller not found', status_code: 404 }],
        [server.http.get('/sandbox/v1/notifications/0f6d3c1e-4b7a-4c55-9a0e-2f1b7d9c8e41').set('Authorization', ADMIN), 404, { error_code: 'delivery_not_found', message: 'Notification delivery not found', status_code: 404 }],
        [server.http.post('/sandbox/v1/notifications/0f6d3c1e-4b7a-4c55-9a0e-2f1b7d9c8e41/redeliver').set('Authorization', ADMIN), 404, { error_code: 'delivery_not_found', message: 'Notification delivery not found', status_code: 404 }],
      ];
      for (const [call, status, body] of cases) {
        const res = await call;
        expect(res.status).toBe(status);
        expect(res.body).toEqual(body);
      }
      const bad = await server.http.get('/sandbox/v1/notifications?seller_id=nope').set('Authorization', ADMIN);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error_code: 'invalid_request', status_code: 400, details: [expect.objectContaining({ path: 'query.seller_id' })] });
      const badId = await server.http.get('/sandbox/v1/notifications/nope').set('Authorization', ADMIN);
      expect(badId.status).toBe(400);
      const none = await server.http.get(`/sandbox/v1/notifications?seller_id=${(await createSeller(server)).sellerId}`).set('Authorization', ADMIN);
      expect(none.body).toEqual({ deliveries: [] }); // another seller sees none of these
    });
  });
}
