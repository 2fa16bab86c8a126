// The merchant's test helpers for the checkout notification: a notification of each mode valid
// against the contract's compiled check, the delivery the platform would make (JSON body, Basic
// credentials), and the same receiver behind Express, node:http and a Fetch API handler.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { checkCheckoutNotification } from '@payment-platform/contract/checkout-notification';
import {
  buildCheckoutNotification,
  checkoutNotificationHandler,
  checkoutNotificationReceiver,
  checkoutNotificationRequest,
  CheckoutNotificationError,
  verifyCheckoutNotification,
  type CheckoutNotification,
} from '../../client/index.ts';

const credentials = { user: 'shop', password: 'webhook-s3cret' };

describe('buildCheckoutNotification', () => {
  it.each(['instant', 'payment_link', 'recurring'] as const)('builds a %s notification valid against the contract', (mode) => {
    const notification = buildCheckoutNotification({ mode });
    expectTypeOf(notification).toEqualTypeOf<CheckoutNotification>();
    expect(checkCheckoutNotification(notification), JSON.stringify(checkCheckoutNotification.errors)).toBe(true);
    expect(notification.mode).toBe(mode);
    // Only a payment intent has a payment_intent_id (the contract's table of modes).
    expect('payment_intent_id' in notification).toBe(mode === 'instant');
    expect(notification.payment.result).toMatchObject({ status: 'Authorized', return_code: '00' });
    expect(notification.product?.[0]?.product_type).toBe({ instant: 'physical_goods', payment_link: 'service', recurring: 'renew_subs' }[mode]);
    // The fields the reference sandbox sends in that mode: a recurring charge has no buyer at a page.
    const atPage = ['customer', 'frontend'];
    const expected = { instant: ['payment_intent_id', ...atPage], payment_link: atPage, recurring: [] }[mode];
    expect(Object.keys(notification).sort()).toEqual(['checkout_id', 'mode', 'order_id', 'payment', 'product', 'reference_code', 'seller', ...expected].sort());
    expect(notification.seller).toEqual({ id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', trade_name: 'Café da Montanha', settings: { notification_url_configured: true } });
    if (mode !== 'recurring') expect(notification.frontend).toMatchObject({ sales_channel: 'WEB', ip: '203.0.113.7' });
  });

  it("passes the contract package's compiled check, which is a type guard", () => {
    const value: unknown = JSON.parse(JSON.stringify(buildCheckoutNotification({ mode: 'payment_link' })));
    if (!checkCheckoutNotification(value)) throw new Error(JSON.stringify(checkCheckoutNotification.errors));
    expectTypeOf(value).toEqualTypeOf<CheckoutNotification>();
    expect(value.mode).toBe('payment_link');
  });

  it('makes fresh ids each time, and takes status, amount, currency, order id and overrides', () => {
    const [a, b] = [buildCheckoutNotification(), buildCheckoutNotification()];
    expect(a.checkout_id).not.toBe(b.checkout_id);
    expect(a.payment.result.payment_id).not.toBe(b.payment.result.payment_id);
    const denied = buildCheckoutNotification({ mode: 'recurring', status: 'Denied', amount: 8990, currency: 'CLP', orderId: 'ASSIN-7', overrides: { soft_descriptor: 'CLUBE' } });
    expect(denied).toMatchObject({ order_id: 'ASSIN-7', soft_descriptor: 'CLUBE', payment: { amount: 8990, currency: 'CLP', result: { status: 'Denied', return_code: '51' } } });
    expect(denied.payment.result.authorization_code).toBeUndefined();
    expect(checkCheckoutNotification(denied)).toBe(true);
  });

  it('refuses overrides that break the contract, naming the field', () => {
    const bad = () => buildCheckoutNotification({ overrides: { checkout_id: 'not-a-uuid' } });
    expect(bad).toThrow(CheckoutNotificationError);
    expect(bad).toThrow(/checkout_id/);
  });
});

describe('checkoutNotificationRequest', () => {
  it('is the delivery the platform makes: POST, JSON body, Basic credentials that verify', () => {
    const delivery = checkoutNotificationRequest(credentials, buildCheckoutNotification({ mode: 'payment_link' }));
    expect(delivery.method).toBe('POST');
    expect(delivery.headers).toEqual({ 'content-type': 'application/json', authorization: `Basic ${Buffer.from('shop:webhook-s3cret').toString('base64')}` });
    expect(JSON.parse(delivery.body)).toEqual(delivery.notification);
    expect(verifyCheckoutNotification(delivery.headers, delivery.body, credentials)).toEqual(delivery.notification);
    expect(() => verifyCheckoutNotification(delivery.headers, delivery.body, { ...credentials, password: 'other' })).toThrow(CheckoutNotificationError);
  });

  it('builds a Fetch API Request of the same delivery', async () => {
    const delivery = checkoutNotificationRequest(credentials);
    const fetchRequest = delivery.toRequest('https://shop.example/webhooks/checkout');
    expect(fetchRequest.url).toBe('https://shop.example/webhooks/checkout');
    expect(fetchRequest.headers.get('authorization')).toBe(delivery.headers.authorization);
    expect(await fetchRequest.json()).toEqual(delivery.notification);
  });
});

describe('the receiver in each kind of server', () => {
  const recorder = () => {
    const received: CheckoutNotification[] = [];
    return { received, options: { credentials, onNotification: (n: CheckoutNotification) => void received.push(n) } };
  };

  it('Fetch API handler (Next.js route handler, Hono): 200 and the typed notification', async () => {
    const { received, options } = recorder();
    const handler = checkoutNotificationHandler(options);
    const delivery = checkoutNotificationRequest(credentials, buildCheckoutNotification({ mode: 'recurring' }));
    const response = await handler(delivery.toRequest());
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(received).toEqual([delivery.notification]);
  });

  it('Fetch API handler: 401, 400, 405, 413 and 500 as the Node receiver answers them', async () => {
    const { received, options } = recorder();
    const handler = checkoutNotificationHandler({ ...options, limitBytes: 4096 });
    const wrong = await handler(checkoutNotificationRequest({ user: 'shop', password: 'guess' }).toRequest());
    expect([wrong.status, wrong.headers.get('www-authenticate'), await wrong.json()]).toEqual([401, 'Basic realm="checkout-notification"', { error: 'invalid_credentials' }]);

    const delivery = checkoutNotificationRequest(credentials);
    const broken = await handler(new Request('http://m/', { method: 'POST', headers: delivery.headers, body: JSON.stringify({ ...delivery.notification, mode: 'bogus' }) }));
    expect(broken.status).toBe(400);
    expect((await broken.json()).problems).toContainEqual(expect.objectContaining({ field: 'mode' }));

    const get = await handler(new Request('http://m/', { headers: delivery.headers }));
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);

    const huge = await handler(new Request('http://m/', { method: 'POST', headers: delivery.headers, body: 'x'.repeat(5000) }));
    expect([huge.status, await huge.json()]).toEqual([413, { error: 'payload_too_large' }]);
    expect(received).toEqual([]);

    const failing = checkoutNotificationHandler({ credentials, onNotification: () => Promise.reject(new Error('database down')) });
    const failed = await failing(checkoutNotificationRequest(credentials).toRequest());
    expect([failed.status, await failed.json()]).toEqual([500, { error: 'handler_failed' }]);
  });

  it('Express: the test delivery goes through the mounted receiver', async () => {
    const { received, options } = recorder();
    const app = express();
    app.post('/webhooks/checkout', checkoutNotificationReceiver(options));
    const delivery = checkoutNotificationRequest(credentials, buildCheckoutNotification({ mode: 'payment_link', status: 'Denied' }));
    const res = await request(app).post('/webhooks/checkout').set(delivery.headers).send(delivery.body);
    expect(res.status).toBe(200);
    expect(received).toEqual([delivery.notification]);
  });

  it('node:http: the test delivery sent with fetch to a bare server', async () => {
    const { received, options } = recorder();
    const server = createServer(checkoutNotificationReceiver(options));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const delivery = checkoutNotificationRequest(credentials);
      const response = await fetch(delivery.toRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`));
      expect(response.status).toBe(200);
      expect(received).toEqual([delivery.notification]);
    } finally {
      server.close();
    }
  });

  it('node:http: a body over the limit is answered 413 and its connection closed, so the server closes at once', async () => {
    const { received, options } = recorder();
    const server = createServer(checkoutNotificationReceiver({ ...options, limitBytes: 4096 }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const delivery = checkoutNotificationRequest(credentials);
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
      method: 'POST',
      headers: delivery.headers,
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect([response.status, response.headers.get('connection'), await response.json()]).toEqual([413, 'close', { error: 'payload_too_large' }]);
    expect(received).toEqual([]);
    const started = Date.now();
    await new Promise((resolve) => server.close(resolve));
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
