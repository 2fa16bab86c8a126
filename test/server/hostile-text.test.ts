// Strings the store cannot hold (NUL and the other control characters, unpaired surrogates) are
// refused at the edge with a 4xx in the area's own shape, wherever they come from: a field the
// contract describes, a member it leaves open, the token endpoints' form and Basic credentials, a
// path or query parameter, the hosted pages' forms and addresses (one that does not even decode,
// `/checkout/%ff`, is a 404 page). Nothing reaches the store, nothing is a 500, and
// no log line carries the values of a SQL statement.
import { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLink, createSeller, product, STORES, type SandboxSeller } from './support/payment-link.ts';
import { buyerForm, cardForm, WC } from './support/checkout.ts';
import { basic, expectNoStackTrace, startTestServer, type TestServer, ADMIN, startPlatformServer } from './support/server.ts';
import { freshStore } from './support/stores.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { contractExample } from './support/web-checkout.ts';

const NOT_TEXT = 'must not contain control characters or unpaired surrogates';
const PASSWORD = 'webhook-password-2026';
const TOKEN_FORM = { grant_type: 'client_credentials', client_secret: 'any-secret', scope: 'digital-plataform:gateway-api' };

describe.each(STORES)('hostile text on %s', (kind) => {
  let server: TestServer;
  let seller: SandboxSeller;
  const count = async (table: string) => Number((await server.store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  const intent = (change: (body: any) => void) => {
    const body = contractExample('PaymentIntentRequestStandard');
    change(body);
    return server.http.post(`${WC}/payment-intent`).set('Authorization', `Bearer ${seller.token}`).send(body);
  };
  const configure = (body: object) => server.http.patch(`${WC}/technical-configurations`).set('Authorization', `Bearer ${seller.token}`).send(body);

  beforeAll(async () => {
    server = await startPlatformServer(kind);
    seller = await createSeller(server);
  });
  afterAll(() => server?.close());

  it.each([
    ['a NUL in order_id', (b: any) => (b.order_id = 'PED-\u00002026'), 'order_id'],
    ['a NUL in a product title', (b: any) => (b.product[0].title = 'Tênis\u0000'), 'product.0.title'],
    ['a NUL in the customer name', (b: any) => (b.customer.first_name = '\u0000Maria'), 'customer.first_name'],
    ['a NUL in a member the contract leaves open', (b: any) => (b.customer.nickname = 'Mari\u0000'), 'customer.nickname'],
    ['a NUL in a member name', (b: any) => (b.customer['nick\u0000'] = 'Mari'), 'customer'],
    ['an unpaired surrogate in the last name', (b: any) => (b.customer.last_name = 'Silva\ud800'), 'customer.last_name'],
  ])('a payment intent with %s is a 422 validation_error, and no intent is stored', async (_name, change, field) => {
    const before = await count('payment_intents');
    const res = await intent(change);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'validation_error', message: 'One or more fields failed validation', details: [{ field, message: `${field} ${NOT_TEXT}` }] });
    expect(await count('payment_intents')).toBe(before);
  });

  it('a notification user and password with NUL are refused and the configuration keeps its state', async () => {
    const res = await configure({ notification: { url: 'http://127.0.0.1:9/', user_credentials: { user: 'loja\u0000', password: `${PASSWORD}\u0000` } } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.details).toEqual([
      { field: 'notification.user_credentials.user', message: `notification.user_credentials.user ${NOT_TEXT}` },
      { field: 'notification.user_credentials.password', message: `notification.user_credentials.password ${NOT_TEXT}` },
    ]);
    const stored = await server.store.query('SELECT notification_url FROM web_checkout_configurations WHERE seller_id = $1', [seller.sellerId]);
    expect(stored.rows.filter((r) => r.notification_url !== null)).toEqual([]);
  });

  it('a success_url with NUL is refused', async () => {
    const res = await configure({ success_url: 'https://loja.example.com/ok\u0000' });
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([{ field: 'success_url', message: `success_url ${NOT_TEXT}` }]);
  });

  it('the first token form with client_id a%00b is a 400 in its shape', async () => {
    const form = new URLSearchParams(TOKEN_FORM).toString();
    const res = await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(`${form}&client_id=a%00b`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error_code: 'invalid_request', message: `client_id ${NOT_TEXT}`, status_code: 400 });
  });

  it('the second token form with a NUL in the Basic credentials is a 400 in its RFC 6749 shape', async () => {
    const res = await server.http
      .post('/authentication/oauth2/access_token')
      .set('Authorization', basic('a\u0000b', 'any-secret'))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: `The Basic credentials ${NOT_TEXT}` });
  });

  it('a sandbox link whose product title holds an unpaired surrogate is a 400 with details, and no link is stored', async () => {
    const before = await count('payment_links');
    const body = JSON.stringify({ seller_id: seller.sellerId, label: 'Link', type: 'custom', products: [product({ title: 'TITLE' })] }).replace('"TITLE"', '"\\udc00"');
    const res = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).type('json').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400, details: [{ message: `products.0.title ${NOT_TEXT}`, path: 'body.products.0.title' }] });
    expect(await count('payment_links')).toBe(before);
  });

  it('a NUL in a query parameter is a 400 and in the public short id a 404, in the payment link shape', async () => {
    const auth = `Bearer ${seller.token}`;
    const list = await server.http.get('/dpy/payment-link/v1/payment-links?title=a%00b').set('Authorization', auth);
    expect(list.status).toBe(400);
    expect(list.body.details).toEqual([{ message: `title ${NOT_TEXT}`, path: 'query.title' }]);
    const byShortId = await server.http.get('/dpy/payment-link/v1/payment-links/by-short-id/a%00b').set('Authorization', auth);
    expect(byShortId.status).toBe(404);
    expect(byShortId.body).toEqual({ error_code: 'payment_link_not_found', message: 'Payment Link not found', status_code: 404 });
  });

  it('the payment link page refuses buyer fields with NUL (400 page) and places no order', async () => {
    const link = await createLink(server, seller.sellerId);
    const before = await count('payment_link_orders');
    const res = await server.http.post(`/pay/${link.short_id}`).type('form').send({ ...buyerForm({ first_name: 'Ana\u0000' }), ...cardForm() });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h2 id="heading">Check your details</h2>');
    expect(res.text).toContain('control characters');
    expect(await count('payment_link_orders')).toBe(before);
  });

  it('the hosted checkout refuses a card form with NUL before anything is charged', async () => {
    const created = await intent(() => {});
    const res = await server.http.post(`/checkout/${created.body.payment_intent_id}/pay`).type('form').send(cardForm('4111111111111111', { cardholder_name: 'MARIA\u0000' }));
    expect(res.status).toBe(400);
    expect(res.text).toContain('Check your details');
    expect(await count('checkout_payments')).toBe(0);
  });

  it.each([
    ['GET', '/checkout/%ff'],
    ['GET', '/pay/%E0%A4%A'],
    ['POST', '/checkout/%ff/pay'],
    ['POST', '/pay/%E0%A4%A'],
    ['GET', '/pay/a%00b'],
    ['GET', '/checkout/%C0%80'],
  ])('%s %s (an address that does not decode to text) is a 404 page', async (method, path) => {
    const res = await server.http[method === 'GET' ? 'get' : 'post'](path).type('form').send(method === 'POST' ? cardForm() : undefined);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain('<h2 id="heading">Checkout not found</h2>');
    expect(res.text).toContain('There is nothing to pay at this address');
  });

  it('no request above was a 500, and no log line holds the refused password', () => {
    expect(server.logs.lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(server.logs.text).not.toContain(PASSWORD);
  });
});

describe.each(STORES)('SQL errors on %s', (kind) => {
  const SECRET = 'merchant-secret-2026';
  let server: TestServer;
  beforeAll(async () => {
    // An operation of the contract whose handler runs a statement that fails on its parameter.
    const failing = () => Router().get('/dpy/payment-link/v1/sellers', async () => void (await server.store.query('SELECT $1::uuid', [SECRET])));
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await freshStore(kind), extraAreas: [failing] });
  });
  afterAll(() => server?.close());

  it('a failing statement is a 500 that reveals nothing, logged with its SQLSTATE but never its values', async () => {
    const seller = await createSeller(server);
    const res = await server.http.get('/dpy/payment-link/v1/sellers').set('Authorization', `Bearer ${seller.token}`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error_code: 'internal_error', message: 'Internal server error', status_code: 500 });
    expectNoStackTrace(res.body);
    const logged = server.logs.lines.find((l) => l.err);
    expect(logged?.err).toMatchObject({ code: '22P02', message: 'invalid input syntax for type uuid: "[redacted]"' });
    expect(logged?.err).not.toHaveProperty('params');
    expect(server.logs.text).not.toContain(SECRET);
  });
});
