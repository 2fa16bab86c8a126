// Merchant notifications of hosted checkout payments as the server delivers them (the worker main.ts
// runs, with a fast retry policy), and the sandbox delivery log operations, on every store kind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckoutNotification } from '../../client/webhooks/verify.ts';
import { notificationDeliveryWorker, retryPolicyOf } from '../../server/notifications/delivery-worker.ts';
import { createLogger } from '../../server/http/logging.ts';
import { CONTRACT_RETRY_POLICY } from '../../server/notifications/retry-policy.ts';
import type { HostResolver } from '../../server/http/public-addresses.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, type TestServer, ADMIN, startPlatformServer } from './support/server.ts';
import { createSeller, STORES, type SandboxSeller } from './support/payment-link.ts';
import { cardForm, configureCheckout, createIntent, MERCHANT_CREDENTIALS, startMerchant, type Merchant } from './support/checkout.ts';
import { PUBLIC_V4, rebindingResolver, tableResolver } from './support/resolvers.ts';

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

    it('answers a redelivery as queued (pending, the attempts so far), even when a worker hears of it at once and sends it', async () => {
      const intent = await createIntent(server, seller.token);
      await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
      const delivery = (await list()).body.deliveries.find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id);
      // A worker as quick as can be: told of the due delivery, it marks it delivered straight away.
      let heard = 0;
      const stop = server.store.onAnnounced!('notification-due', () => {
        heard++;
        void server.store.query(`UPDATE notification_deliveries SET status = 'delivered', delivered_at = now() WHERE delivery_id = $1`, [delivery.delivery_id]);
      });
      try {
        const again = await server.http.post(`/sandbox/v1/notifications/${delivery.delivery_id}/redeliver`).set('Authorization', ADMIN);
        expect(again.status).toBe(202);
        expect(again.body).toMatchObject({ delivery_id: delivery.delivery_id, status: 'pending', attempts: delivery.attempts });
        expect(again.body.delivered_at).toBeUndefined();
        // The quick worker did hear of it, after the answer's state was read.
        await until(async () => (await server.http.get(`/sandbox/v1/notifications/${delivery.delivery_id}`).set('Authorization', ADMIN)).body.status === 'delivered');
        expect(heard).toBe(1);
      } finally {
        stop();
      }
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
        expect.objectContaining({ attempt: 1, url: `${merchant.url}/`, latency_ms: 0, error: 'notification URL refused: must not point to a loopback, private, link-local or reserved address' }),
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
      expect(none.body).toEqual({ deliveries: [], has_more: false }); // another seller sees none of these
    });

    it('pages the delivery log newest first with limit and before, filters it by status, and refuses a cursor of another seller', async () => {
      const shop = await createSeller(server);
      await configureCheckout(server, shop.token, merchant);
      const intents: string[] = [];
      for (let i = 0; i < 5; i++) {
        const intent = await createIntent(server, shop.token);
        expect((await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm())).status).toBe(303);
        intents.push(intent.payment_intent_id);
      }
      const page = (query: string) => server.http.get(`/sandbox/v1/notifications?seller_id=${shop.sellerId}&${query}`).set('Authorization', ADMIN);
      const whole = await page('');
      expect(whole.status).toBe(200);
      expect(whole.body.has_more).toBe(false);
      const ids: string[] = whole.body.deliveries.map((d: any) => d.delivery_id);
      expect(whole.body.deliveries.map((d: any) => d.payload.payment_intent_id)).toEqual([...intents].reverse()); // newest first

      // Two at a time, each page after the last delivery of the one before: every delivery once, in order.
      const seen: string[] = [];
      let before = '';
      for (const expected of [[true, 2], [true, 2], [false, 1]] as const) {
        const res = await page(`limit=2${before && `&before=${before}`}`);
        expect(res.status).toBe(200);
        expect([res.body.has_more, res.body.deliveries.length]).toEqual(expected);
        seen.push(...res.body.deliveries.map((d: any) => d.delivery_id));
        before = seen.at(-1)!;
      }
      expect(seen).toEqual(ids);
      expect((await page(`before=${ids.at(-1)}`)).body).toEqual({ deliveries: [], has_more: false });

      // One delivered, one abandoned: status keeps those only, and pages within them.
      await server.store.query(`UPDATE notification_deliveries SET status = 'delivered', delivered_at = now() WHERE delivery_id = $1`, [ids[1]]);
      await server.store.query(`UPDATE notification_deliveries SET status = 'abandoned' WHERE delivery_id = $1`, [ids[3]]);
      const states = async (query: string) => (await page(query)).body.deliveries.map((d: any) => [d.delivery_id, d.status]);
      expect(await states('status=delivered')).toEqual([[ids[1], 'delivered']]);
      expect(await states('status=abandoned')).toEqual([[ids[3], 'abandoned']]);
      expect(await states('status=pending')).toEqual([ids[0], ids[2], ids[4]].map((id) => [id, 'pending']));
      const pendingPage = await page(`status=pending&limit=1&before=${ids[0]}`);
      expect(pendingPage.body.deliveries.map((d: any) => d.delivery_id)).toEqual([ids[2]]);
      expect(pendingPage.body.has_more).toBe(true);

      // A cursor that is not one of this seller's deliveries: another seller's, or none at all.
      const othersDelivery = (await list()).body.deliveries[0].delivery_id;
      for (const cursor of [othersDelivery, '0f6d3c1e-4b7a-4c55-9a0e-2f1b7d9c8e41']) {
        const res = await page(`before=${cursor}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error_code: 'delivery_not_found', message: 'Notification delivery not found', status_code: 404 });
      }
      for (const query of ['limit=0', 'limit=101', 'limit=1.5', 'status=sent', 'before=nope']) {
        const res = await page(query);
        expect(res.status, query).toBe(400);
        expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      }
    });
  });
}

for (const kind of STORES) {
  describe(`notification host names checked at delivery on ${kind}`, () => {
    let server: TestServer;
    let merchant: Merchant;
    /** `http://<name>:<merchant's port>`: the merchant on 127.0.0.1, reached by a host name. */
    const named = (name: string) => ({ url: merchant.url.replace('127.0.0.1', name) });

    beforeAll(async () => {
      server = await startPlatformServer(kind); // a local sandbox: private addresses allowed when set
      merchant = await startMerchant();
    });
    afterAll(async () => {
      await merchant?.close();
      await server?.close();
    });

    /** A seller whose notification URL is `url`, a paid intent, and one attempt by a worker resolving names with `resolve`. */
    async function attemptOnce(on: { url: string }, resolve: HostResolver, allowPrivateNotificationUrls: boolean, configureOn = server) {
      const seller = await createSeller(server);
      await configureCheckout(configureOn, seller.token, on);
      const intent = await createIntent(server, seller.token);
      expect((await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm())).status).toBe(303);
      const worker = notificationDeliveryWorker({ store: server.store, logger: createLogger('silent'), config: { ...server.config, allowPrivateNotificationUrls }, resolveHostName: resolve });
      const before = merchant.notifications.length;
      expect(await worker.runOnce()).toBe(1);
      const [delivery] = (await server.http.get(`/sandbox/v1/notifications?seller_id=${seller.sellerId}`).set('Authorization', ADMIN)).body.deliveries;
      return { delivery, received: merchant.notifications.slice(before) };
    }

    it.each([
      ['127.0.0.1', 'loopback'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
      ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ])('a host name resolving to %s (%s) is a failed attempt, and the receiver gets nothing', async (address) => {
      const { delivery, received } = await attemptOnce(named('merchant.example'), tableResolver({ 'merchant.example': [address] }), false);
      expect(received).toEqual([]);
      expect(delivery).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, url: `${named('merchant.example').url}/`, error: 'merchant.example resolves to a loopback, private, link-local or reserved address' }] });
      expect(delivery.attempts[0].status_code).toBeUndefined();
    });

    it('a name accepted with a public answer that rebinds to loopback is refused at delivery (DNS rebinding)', async () => {
      const resolve = rebindingResolver([PUBLIC_V4], ['127.0.0.1']);
      const strict = await startTestServer({ store: server.store, config: { apiSpec: PLATFORM_BUNDLE, allowPrivateNotificationUrls: false }, resolveHostName: resolve });
      try {
        const { delivery, received } = await attemptOnce(named('rebind.example'), resolve, false, strict); // accepted: its first answer is public
        expect(resolve.lookups).toEqual(['rebind.example', 'rebind.example']);
        expect(received).toEqual([]);
        expect(delivery).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, error: 'rebind.example resolves to a loopback, private, link-local or reserved address' }] });
      } finally {
        await strict.close({ keepStore: true });
      }
    });

    it('the same name is delivered, through the injected resolver, where private addresses are allowed', async () => {
      const resolve = tableResolver({ 'merchant.example': ['127.0.0.1'] });
      const { delivery, received } = await attemptOnce(named('merchant.example'), resolve, true);
      expect(received).toHaveLength(1);
      expect(received[0]!.headers.host).toBe(named('merchant.example').url.slice('http://'.length));
      expect(delivery).toMatchObject({ status: 'delivered', attempts: [{ attempt: 1, status_code: 200 }] });
      expect(resolve.lookups).toEqual(['merchant.example']);
    });
  });
}
