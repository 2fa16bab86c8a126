// Sandbox sellers and payment links (createSandboxSeller, createSandboxPaymentLink): defaults, the
// country's payment methods, credentials, conflicts and the admin token; on every store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyClientSecret } from '../../server/authentication/secrets.ts';
import { isMethodAvailable, PAYMENT_METHOD_KEYS, withEveryMethod } from '../../server/payment-link/payment-methods.ts';
import { newShortId } from '../../server/payment-link/service.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { createSandboxPaymentLink, maxOrdersOf } from '../../server/sandbox/payment-links/service.ts';
import { defaultPayments } from '../../server/sandbox/sellers/service.ts';
import { BASE, createLink, createSeller, PNG, product, STORES, upload } from './support/payment-link.ts';
import { expectNoStackTrace, type TestServer, ADMIN, startPlatformServer } from './support/server.ts';
import { tokenOf } from './support/sellers.ts';

const AVAILABILITY: Record<string, string[]> = {
  BR: ['credit', 'debit', 'bankslip', 'instant_payment', 'google_pay', 'apple_pay'],
  AR: ['credit', 'debit', 'c2p_master'],
  MX: ['credit', 'debit'],
  CL: ['credit', 'debit'],
  ES: ['credit', 'debit'],
  UY: ['credit', 'debit'],
};

describe('isMethodAvailable (the seed availability table)', () => {
  it.each(Object.entries(AVAILABILITY))('%s has exactly %j', (country, methods) => {
    expect(PAYMENT_METHOD_KEYS.filter((key) => isMethodAvailable(country, key))).toEqual(methods);
  });
});

describe('defaultPayments', () => {
  it('enables credit and debit with VISA and MASTERCARD, credit in 2 to 12 installments without interest, plus the country methods', () => {
    const payments = defaultPayments('AR', ['ARS']);
    expect(payments.credit!.brands!.map((b) => [b.brand, b.enabled, b.currencies])).toEqual([
      ['VISA', true, ['ARS']],
      ['MASTERCARD', true, ['ARS']],
    ]);
    const installments = payments.credit!.brands![0]!.supported_installments![0]!;
    expect(installments.installments).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(installments.installments_with_interest).toBeUndefined();
    expect(payments.debit!.brands!.map((b) => b.brand)).toEqual(['VISA', 'MASTERCARD']);
    expect(PAYMENT_METHOD_KEYS.filter((k) => payments[k]?.enabled)).toEqual(AVAILABILITY.AR);
  });
});

describe('maxOrdersOf', () => {
  it('a unique link has max_orders 1; a custom link keeps its own or the default', () => {
    expect(maxOrdersOf({ type: 'unique' }, 50)).toBe(1);
    expect(maxOrdersOf({ type: 'unique', max_orders: 1 }, null)).toBe(1);
    expect(() => maxOrdersOf({ type: 'unique', max_orders: 3 }, null)).toThrow('a unique link has max_orders 1');
    expect(maxOrdersOf({ type: 'custom' }, 50)).toBe(50);
    expect(maxOrdersOf({ type: 'custom', max_orders: 7 }, 50)).toBe(7);
    expect(maxOrdersOf({ type: 'custom' }, null)).toBeNull();
  });
});

describe('withEveryMethod', () => {
  it('answers all seven keys, a method the country lacks always disabled', () => {
    expect(withEveryMethod('MX', { credit: { enabled: true }, bankslip: { enabled: true } })).toEqual({
      credit: { enabled: true },
      debit: { enabled: false },
      bankslip: { enabled: false },
      instant_payment: { enabled: false },
      google_pay: { enabled: false },
      apple_pay: { enabled: false },
      c2p_master: { enabled: false },
    });
  });
});

describe('newShortId', () => {
  it('draws 8 characters of [A-Za-z0-9]', () => {
    const ids = Array.from({ length: 200 }, newShortId);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(new Set(ids).size).toBe(200);
  });
});

describe.each(STORES)('sandbox sellers and payment links (%s)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
  });
  afterAll(() => server?.close());

  describe('POST /sandbox/v1/sellers', () => {
    it('answers Cache-Control: no-store and X-Content-Type-Options: nosniff, as every API answer (its client_secret, an error)', async () => {
      const created = await server.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).send({ trade_name: 'Sem Cache', email: 'c@example.com', country: 'BR', currencies: ['BRL'] });
      expect(created.status).toBe(201);
      expect(created.body.credentials.client_secret).toEqual(expect.any(String));
      expect(created.headers['cache-control']).toBe('no-store');
      expect(created.headers['x-content-type-options']).toBe('nosniff');
      const refused = await server.http.post('/sandbox/v1/sellers').set('Authorization', 'Bearer wrong').send({});
      expect(refused.status).toBe(401);
      expect(refused.headers['cache-control']).toBe('no-store');
      expect(refused.headers['x-content-type-options']).toBe('nosniff');
      const config = await server.http.get('/dpy/payment-link/v1/payment-links/business-configurations').set('Authorization', `Bearer ${await tokenOf(server, { clientId: created.body.credentials.client_id, clientSecret: created.body.credentials.client_secret })}`);
      expect(config.status).toBe(200);
      expect(config.headers['cache-control']).toBe('no-store');
      expect(config.headers['x-content-type-options']).toBe('nosniff');
    });

    it('creates a seller with the defaults, credentials that issue a token, and its business configuration', async () => {
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'Estúdio Aurora', email: 'fin@aurora.com.br', country: 'BR', currencies: ['BRL', 'USD'], client_id: 'estudio-aurora', client_secret: 's3cr3t-estudio-aurora' });
      expect(res.status).toBe(201);
      const { seller, credentials } = res.body;
      expect(credentials).toEqual({ client_id: 'estudio-aurora', client_secret: 's3cr3t-estudio-aurora', scope: 'digital-plataform:gateway-api' });
      expect(seller).toMatchObject({ trade_name: 'Estúdio Aurora', email: 'fin@aurora.com.br', country: 'BR', currencies: ['BRL', 'USD'] });
      expect(seller.merchant_id).toMatch(/^\d{15}$/);
      expect(seller.seller_code).toMatch(/^SBX-\d{6}$/);
      expect(Object.values(seller.services)).toEqual(Array(9).fill(true));
      expect(seller.payments).toEqual(defaultPayments('BR', ['BRL', 'USD']));

      // Stored: the secret only as a hash; the seller's tenant and recurrence flag.
      const client = await server.store.query<{ secret_hash: string }>('SELECT secret_hash FROM api_clients WHERE client_id = $1', ['estudio-aurora']);
      expect(client.rows[0]!.secret_hash).not.toContain('s3cr3t');
      expect(await verifyClientSecret('s3cr3t-estudio-aurora', client.rows[0]!.secret_hash)).toBe(true);
      const stored = await server.store.query('SELECT tenant, recurrence_enabled FROM sellers WHERE seller_id = $1', [seller.seller_id]);
      expect(stored.rows).toEqual([{ tenant: 'sandbox', recurrence_enabled: true }]);

      // The credentials work, and the payment link API reads the seller and its defaults.
      const token = (
        await server.http
          .post('/authentication/oauth2/-core/access_token')
          .type('form')
          .send({ grant_type: 'client_credentials', client_id: 'estudio-aurora', client_secret: 's3cr3t-estudio-aurora', scope: 'digital-plataform:gateway-api' })
      ).body.access_token;
      const me = await server.http.get(`${BASE}/sellers`).set('Authorization', `Bearer ${token}`);
      expect(me.status).toBe(200);
      expect(me.body).toEqual(seller);
      const config = await server.http.get(`${BASE}/payment-links/business-configurations`).set('Authorization', `Bearer ${token}`);
      expect(config.status).toBe(200);
      expect(config.body).toEqual({
        request_delivery_address: false,
        payment: seller.payments,
        payment_types: ['credit', 'debit', 'bankslip', 'instant_payment', 'google_pay', 'apple_pay'],
        currency: 'BRL',
      });
    });

    it('generates the client id and secret when omitted, and keeps given services (absent flags off)', async () => {
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'Tienda', email: 'a@tienda.mx', country: 'MX', currencies: ['MXN'], services: { checkout: true, payment_link: true }, tenant: 'team-a', recurrence_enabled: false });
      expect(res.status).toBe(201);
      expect(res.body.credentials.client_id).toMatch(/^sbx-[0-9a-f]{16}$/);
      expect(res.body.credentials.client_secret.length).toBeGreaterThanOrEqual(32);
      expect(res.body.seller.services).toEqual({
        checkout: true, vault: false, card_verification: false, preauthorization: false, unico_id: false, threeds: false, anti_fraud: false, payment_link: true, tokenization: false,
      });
      expect(PAYMENT_METHOD_KEYS.filter((k) => res.body.seller.payments[k].enabled)).toEqual(['credit', 'debit']);
      const stored = await server.store.query('SELECT tenant, recurrence_enabled FROM sellers WHERE seller_id = $1', [res.body.seller.seller_id]);
      expect(stored.rows).toEqual([{ tenant: 'team-a', recurrence_enabled: false }]);
    });

    it('keeps a given business configuration', async () => {
      const seller = await createSeller(server, {
        country: 'AR',
        currencies: ['ARS', 'USD'],
        business_configuration: { currency: 'USD', max_orders: 20, request_delivery_address: true, expiration: '2030-01-01T00:00:00-03:00', payment: { c2p_master: { enabled: true } } },
      });
      const config = await server.http.get(`${BASE}/payment-links/business-configurations`).set('Authorization', `Bearer ${seller.token}`);
      expect(config.body).toEqual({
        expiration: '2030-01-01T03:00:00.000Z',
        max_orders: 20,
        request_delivery_address: true,
        payment: { credit: { enabled: false }, debit: { enabled: false }, bankslip: { enabled: false }, instant_payment: { enabled: false }, google_pay: { enabled: false }, apple_pay: { enabled: false }, c2p_master: { enabled: true } },
        payment_types: ['c2p_master'],
        currency: 'USD',
      });
    });

    it('refuses a default expiration already past (every link would be born expired), and creates nothing', async () => {
      const before = (await server.store.query('SELECT count(*)::int AS n FROM sellers')).rows[0];
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'Passada', email: 'p@example.com', country: 'BR', currencies: ['BRL'], business_configuration: { expiration: '2020-01-01T00:00:00Z' } });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error_code: 'validation_error', status_code: 422, message: 'expiration must be in the future' });
      expect(JSON.stringify(res.body.details)).toContain('business_configuration.expiration');
      expect((await server.store.query('SELECT count(*)::int AS n FROM sellers')).rows[0]).toEqual(before);
    });

    it("names the seller's default expiration when it passed since it was set and a link brings none", async () => {
      const seller = await createSeller(server, { business_configuration: { expiration: '2030-01-01T00:00:00Z' } });
      await server.store.query(`UPDATE business_configurations SET expiration = '2021-01-01T00:00:00Z' WHERE seller_id = $1`, [seller.sellerId]);
      const res = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: seller.sellerId, label: 'Link', type: 'custom', products: [product()] });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe("the business configuration's default expiration must be in the future");
      // A link that brings its own expiration is created.
      const own = await server.http
        .post('/sandbox/v1/payment-links')
        .set('Authorization', ADMIN)
        .send({ seller_id: seller.sellerId, label: 'Link', type: 'custom', products: [product()], expiration: '2031-01-01T00:00:00Z' });
      expect(own.status).toBe(201);
    });

    it("refuses a plan in a currency the seller does not sell in, as a link's", async () => {
      const seller = await createSeller(server);
      const res = await server.http
        .post('/sandbox/v1/plans')
        .set('Authorization', ADMIN)
        .send({ seller_id: seller.sellerId, name: 'Plano', amount: 1000, currency: 'EUR', payment_types: 'credit_card', period: { type: 'monthly', billing_cycle: 12 } });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error_code: 'validation_error', message: "EUR is not one of the seller's currencies (BRL)" });
      expect((await server.store.query('SELECT count(*)::int AS n FROM plans WHERE seller_id = $1', [seller.sellerId])).rows[0]).toEqual({ n: 0 });
    });

    it('answers 409 when the client id is taken, and creates nothing', async () => {
      await createSeller(server, { client_id: 'taken-client' });
      const before = (await server.store.query('SELECT count(*)::int AS n FROM sellers')).rows[0];
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'Outra', email: 'o@example.com', country: 'BR', currencies: ['BRL'], client_id: 'taken-client' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error_code: 'conflict', message: 'client_id taken-client is already taken', status_code: 409 });
      expect((await server.store.query('SELECT count(*)::int AS n FROM sellers')).rows[0]).toEqual(before);
    });

    it.each([
      ['MX', 'bankslip', 'BR'],
      ['BR', 'c2p_master', 'AR'],
      ['AR', 'google_pay', 'BR'],
      ['ES', 'instant_payment', 'BR'],
    ])('answers 422 when a %s seller enables %s', async (country, method, where) => {
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'X', email: 'x@example.com', country, currencies: ['USD'], payments: { credit: { enabled: true }, [method]: { enabled: true } } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        error_code: 'validation_error',
        message: `${method} is not available in ${country}`,
        status_code: 422,
        details: [{ message: `${method} is available in ${where} only`, path: `body.payments.${method}.enabled` }],
      });
    });

    it('answers 422 for a business configuration with an unavailable method or a currency the seller lacks', async () => {
      const send = (business_configuration: object) =>
        server.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).send({ trade_name: 'X', email: 'x@example.com', country: 'CL', currencies: ['CLP'], business_configuration });
      const method = await send({ payment: { apple_pay: { enabled: true } } });
      expect(method.status).toBe(422);
      expect(method.body.details).toEqual([{ message: 'apple_pay is available in BR only', path: 'body.business_configuration.payment.apple_pay.enabled' }]);
      const currency = await send({ currency: 'EUR' });
      expect(currency.status).toBe(422);
      expect(currency.body).toEqual({
        error_code: 'validation_error',
        message: "EUR is not one of the seller's currencies (CLP)",
        status_code: 422,
        details: [{ message: "EUR is not one of the seller's currencies (CLP)", path: 'body.business_configuration.currency' }],
      });
    });

    it('answers 400 for a body that breaks the contract', async () => {
      const res = await server.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).send({ trade_name: 'X', email: 'x@example.com', country: 'PE', currencies: ['PEN'] });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      expect(res.body.details).toEqual([expect.objectContaining({ path: 'body.country' })]);
    });

    it("answers 400 at once for 1,199 objects as currencies and payment types (unique items: the validator compared them pairwise, seconds)", async () => {
      const many = Array.from({ length: 1_199 }, (_, i) => ({ k: i, a: {} }));
      const started = performance.now();
      const res = await server.http
        .post('/sandbox/v1/sellers')
        .set('Authorization', ADMIN)
        .send({ trade_name: 'X', email: 'x@example.com', country: 'BR', currencies: many, business_configuration: { payment_types: many.slice(0, 1_000) } });
      expect(performance.now() - started).toBeLessThan(2_000); // 6-13 s before (re-attack review); a complexity guard, loosely bounded
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      expect(res.body.details[0]).toMatchObject({ path: 'body.currencies' }); // over maxItems, then each item's own problems
      expect(res.body.details).toHaveLength(20);
      expectNoStackTrace(res.body);
    });

    it('answers 401 without the sandbox admin token, or with a wrong one', async () => {
      for (const auth of [undefined, 'Bearer wrong-token']) {
        const req = server.http.post('/sandbox/v1/sellers');
        if (auth) req.set('Authorization', auth);
        const res = await req.send({ trade_name: 'X', email: 'x@example.com', country: 'BR', currencies: ['BRL'] });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error_code: 'unauthorized', message: 'Missing or wrong sandbox administration token', status_code: 401 });
        expect(res.headers['www-authenticate']).toBe('Bearer realm="sandbox"');
        expectNoStackTrace(res.body);
      }
    });
  });

  describe('POST /sandbox/v1/payment-links', () => {
    it('creates an ACTIVE link with a new short id and the defaults of the business configuration', async () => {
      const seller = await createSeller(server, {
        business_configuration: { max_orders: 30, request_delivery_address: true, expiration: '2031-06-30T23:59:59-03:00', payment: { instant_payment: { enabled: true } } },
      });
      const res = await server.http
        .post('/sandbox/v1/payment-links')
        .set('Authorization', ADMIN)
        .send({ seller_id: seller.sellerId, label: 'Curso', type: 'custom', products: [product({ quantity: 2 })], shipping_amount: 1500 });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        seller_id: seller.sellerId,
        label: 'Curso',
        type: 'custom',
        status: 'ACTIVE',
        successful_sales: 0,
        max_orders: 30,
        request_delivery_address: true,
        expiration: '2031-07-01T02:59:59.000Z',
        shipping_amount: 1500,
        currency: 'BRL',
        products: [product({ quantity: 2 })],
      });
      expect(res.body.short_id).toMatch(/^[A-Za-z0-9]{8}$/);
      expect(res.body.payment.instant_payment).toEqual({ enabled: true });
      expect(res.body.payment.credit).toEqual({ enabled: false });
      expect(res.body.created_at).toBe(res.body.updated_at);
      const stored = await server.store.query('SELECT status, short_id FROM payment_links WHERE link_id = $1', [res.body.link_id]);
      expect(stored.rows).toEqual([{ status: 'ACTIVE', short_id: res.body.short_id }]);
      const public_ = await server.http.get(`${BASE}/payment-links/by-short-id/${res.body.short_id}`);
      expect(public_.body).toEqual(res.body);
    });

    it('gives a unique link max_orders 1, and refuses another max_orders with 422', async () => {
      const link = await createLink(server, DEMO_SELLER_ID, { type: 'unique' });
      expect(link.max_orders).toBe(1);
      const res = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: DEMO_SELLER_ID, label: 'U', type: 'unique', max_orders: 5, products: [product()] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error_code: 'validation_error', message: 'a unique link has max_orders 1', status_code: 422, details: [{ message: 'a unique link has max_orders 1', path: 'body.max_orders' }] });
    });

    it('draws another short id when the first one is taken', async () => {
      const first = await createLink(server, DEMO_SELLER_ID);
      const draws = [first.short_id, 'Fresh123'];
      const created = await createSandboxPaymentLink(
        server.store,
        { seller_id: DEMO_SELLER_ID, label: 'Retry', type: 'custom', products: [{ product_type: 'service', title: 'Consultoria', amount: 10000 }] },
        { shortId: () => draws.shift()! },
      );
      expect(created.shortId).toBe('Fresh123');
      expect(draws).toEqual([]);
    });

    it('accepts an image of the seller, and answers 422 for an unknown image or another seller’s', async () => {
      const seller = await createSeller(server);
      const other = await createSeller(server);
      const mine = (await upload(server, seller.token, PNG, 'image/png')).body.image_id;
      const theirs = (await upload(server, other.token, PNG, 'image/png')).body.image_id;
      const link = await createLink(server, seller.sellerId, { products: [product({ image_id: mine })] });
      expect(link.products[0].image_id).toBe(mine);
      // The same id in upper case is the same image, kept in the lower case uploads answer.
      const upper = await createLink(server, seller.sellerId, { products: [product({ image_id: mine.toUpperCase() })] });
      expect(upper.products[0].image_id).toBe(mine);
      const res = await server.http
        .post('/sandbox/v1/payment-links')
        .set('Authorization', ADMIN)
        .send({ seller_id: seller.sellerId, label: 'L', type: 'custom', products: [product({ image_id: mine }), product({ image_id: theirs }), product({ image_id: '0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b' })] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        error_code: 'validation_error',
        message: 'products.1.image_id is not an image uploaded by this seller; products.2.image_id is not an image uploaded by this seller',
        status_code: 422,
        details: [
          { message: 'products.1.image_id is not an image uploaded by this seller', path: 'body.products.1.image_id' },
          { message: 'products.2.image_id is not an image uploaded by this seller', path: 'body.products.2.image_id' },
        ],
      });
    });

    it('answers 422 for a method the seller’s country lacks, a currency it lacks, or a past expiration', async () => {
      const seller = await createSeller(server, { country: 'UY', currencies: ['UYU'] });
      const send = (extra: object) => server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: seller.sellerId, label: 'L', type: 'custom', products: [product()], ...extra });
      const method = await send({ payment: { credit: { enabled: true }, bankslip: { enabled: true } } });
      expect(method.status).toBe(422);
      expect(method.body).toEqual({ error_code: 'validation_error', message: 'bankslip is not available in UY', status_code: 422, details: [{ message: 'bankslip is available in BR only', path: 'body.payment.bankslip.enabled' }] });
      const currency = await send({ currency: 'BRL' });
      expect(currency.status).toBe(422);
      expect(currency.body.details).toEqual([{ message: "BRL is not one of the seller's currencies (UYU)", path: 'body.currency' }]);
      const past = await send({ expiration: '2020-01-01T00:00:00Z' });
      expect(past.status).toBe(422);
      expect(past.body.details).toEqual([{ message: 'expiration must be in the future', path: 'body.expiration' }]);
      expect((await server.store.query('SELECT 1 FROM payment_links WHERE seller_id = $1', [seller.sellerId])).rowCount).toBe(0);
    });

    it('answers 404 for an unknown seller', async () => {
      const res = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: '0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b', label: 'L', type: 'custom', products: [product()] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error_code: 'seller_not_found', message: 'Seller not found', status_code: 404 });
    });

    it('answers 400 for a body that breaks the contract and 401 without the admin token', async () => {
      const bad = await server.http.post('/sandbox/v1/payment-links').set('Authorization', ADMIN).send({ seller_id: DEMO_SELLER_ID, label: 'L', type: 'custom', products: [] });
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual([expect.objectContaining({ path: 'body.products' })]);
      const anonymous = await server.http.post('/sandbox/v1/payment-links').send({ seller_id: DEMO_SELLER_ID, label: 'L', type: 'custom', products: [product()] });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ error_code: 'unauthorized', message: 'Missing or wrong sandbox administration token', status_code: 401 });
    });
  });

  describe('the demo seller', () => {
    it('has a business configuration: its payments in BRL', async () => {
      const token = (
        await server.http
          .post('/authentication/oauth2/-core/access_token')
          .type('form')
          .send({ grant_type: 'client_credentials', client_id: 'demo-seller-client', client_secret: 'demo-seller-secret', scope: 'digital-plataform:gateway-api' })
      ).body.access_token;
      const res = await server.http.get(`${BASE}/payment-links/business-configurations`).set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ currency: 'BRL', request_delivery_address: false, payment_types: ['credit', 'debit', 'bankslip', 'instant_payment', 'google_pay', 'apple_pay'] });
    });
  });
});
