// POST /dpy/web-checkout/v1/payment-intent through the whole server (joined bundle, validation both
// ways): every status it can answer, the exact body, and what is stored, on every store under test.
import type { Response } from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SELLER, DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { webCheckoutRepository } from '../../server/web-checkout/repository.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { expectNoStackTrace, mintToken, startTestServer, tokenForm, type TestServer } from './support/server.ts';
import { contractExample, storesUnderTest } from './support/web-checkout.ts';
import { insertSeller, tokenOf, type InsertedSeller } from './support/sellers.ts';

const PATH = '/dpy/web-checkout/v1/payment-intent';
const PUBLIC_BASE_URL = 'https://checkout.sandbox.test';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const standard = () => contractExample('PaymentIntentRequestStandard');
const cardVerification = () => contractExample('PaymentIntentRequestCardVerification');
const preauthorization = () => contractExample('PaymentIntentRequestPreauthorization');

function expectError(res: Response, status: number, body: unknown) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expectNoStackTrace(res.body);
}

const customerOf = (country: string, document_type: string, document_number: string) => ({
  customer_id: document_number.replace(/\W/g, ''),
  first_name: 'Lucía',
  last_name: 'Fernández',
  name: 'Lucía Fernández',
  email: 'lucia@example.com',
  document_type,
  document_number,
  billing_address: { street: 'Avenida Corrientes', number: '1234', country, postal_code: '1043' },
});

describe.each(storesUnderTest())('createPaymentIntent on $name', ({ open }) => {
  let server: TestServer;
  let demoToken: string;
  let argentine: InsertedSeller;
  let mexican: InsertedSeller;
  let checkoutOff: InsertedSeller;
  let flowsOff: InsertedSeller;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer({ store: await open(), config: { apiSpec: PLATFORM_BUNDLE, publicBaseUrl: PUBLIC_BASE_URL } });
    demoToken = (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
    argentine = await insertSeller(server.store, { country: 'AR', currencies: ['ARS', 'USD'], tradeName: 'Tienda Palermo' });
    mexican = await insertSeller(server.store, { country: 'MX', currencies: ['MXN'], tradeName: 'Tienda Coyoacán' });
    checkoutOff = await insertSeller(server.store, { services: { checkout: false } });
    flowsOff = await insertSeller(server.store, { services: { card_verification: false, preauthorization: false } });
    for (const s of [argentine, mexican, checkoutOff, flowsOff]) tokens[s.sellerId] = await tokenOf(server, s);
  });
  afterAll(() => server?.close());

  const post = (token: string, body: unknown) => server.http.post(PATH).set('Authorization', `Bearer ${token}`).send(body as object);
  const count = async () => Number((await server.store.query<{ n: string }>('SELECT count(*) AS n FROM payment_intents')).rows[0]!.n);
  let before: number;
  beforeEach(async () => {
    before = await count();
  });
  /** A refused call stores nothing. */
  const expectNothingStored = async () => expect(await count()).toBe(before);

  describe('201', () => {
    it('creates a standard intent: UUID v4, the trade name, the hosted page on the public base URL', async () => {
      const started = Date.now();
      const res = await post(demoToken, standard());
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const id = res.body.payment_intent_id;
      expect(id).toMatch(UUID_V4);
      expect(res.body).toEqual({ payment_intent_id: id, trade_name: DEMO_SELLER.trade_name, redirect_url: `${PUBLIC_BASE_URL}/checkout/${id}` });

      const stored = await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, id);
      const request = standard();
      expect(stored).toEqual({
        paymentIntentId: id,
        sellerId: DEMO_SELLER_ID,
        flow: 'standard',
        orderId: request.order_id,
        amount: request.payment.amount,
        currency: request.payment.currency,
        products: request.product,
        customer: request.customer,
        shipping: request.shipping,
        orderDetails: { pickup_store: false, shipping_method: 'SEDEX', soft_descriptor: 'LOJAAURORA' },
        // The contract's defaults, applied by the validator, are stored with what was sent.
        configurations: { '3ds': true, card_verification: false, preauthorization: false },
        fraudPreventionDenial: false,
        status: 'created',
        createdAt: expect.any(Date),
        expiresAt: expect.any(Date),
      });
      expect(stored!.createdAt.getTime()).toBeGreaterThanOrEqual(started - 1000);
      expect(stored!.expiresAt.getTime() - stored!.createdAt.getTime()).toBe(24 * 60 * 60 * 1000);
      expect(await count()).toBe(before + 1);
    });

    it('creates a card verification without payment or products', async () => {
      const res = await post(demoToken, cardVerification());
      expect(res.status).toBe(201);
      const stored = await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, res.body.payment_intent_id);
      expect(stored).toMatchObject({ flow: 'card_verification', amount: null, currency: null, products: null, shipping: null, configurations: { card_verification: true } });
    });

    it('creates a pre-authorization, and keeps the marketplace details', async () => {
      const pre = await post(demoToken, preauthorization());
      expect(pre.status).toBe(201);
      expect(await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, pre.body.payment_intent_id)).toMatchObject({
        flow: 'preauthorization',
        amount: 84000,
        currency: 'BRL',
      });
      const marketplace = contractExample('PaymentIntentRequestMarketplace');
      const res = await post(demoToken, { ...marketplace, unknown_property: 'not kept' });
      expect(res.status).toBe(201);
      const stored = await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, res.body.payment_intent_id);
      expect(stored!.orderDetails).toEqual({
        pickup_store: true,
        dynamic_mcc: 5499,
        additional_data: marketplace.additional_data,
        sub_merchant: marketplace.sub_merchant,
      });
    });

    it('accepts an invalid BR customer_id and marks the intent for a FRAUD_PREVENTION denial', async () => {
      const body = standard();
      body.customer.customer_id = 'CLIENTE00042';
      const res = await post(demoToken, body);
      expect(res.status).toBe(201);
      expect((await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, res.body.payment_intent_id))!.fraudPreventionDenial).toBe(true);
    });

    it('accepts a valid CNPJ as a BR company document', async () => {
      const body = standard();
      body.customer = { ...body.customer, customer_id: '11222333000181', document_type: 'CNPJ', document_number: '11222333000181' };
      const res = await post(demoToken, body);
      expect(res.status).toBe(201);
      expect((await webCheckoutRepository(server.store).findPaymentIntent(DEMO_SELLER_ID, res.body.payment_intent_id))!.fraudPreventionDenial).toBe(false);
    });

    it('creates an AR intent with the configurations false, in one of its currencies, with DNI', async () => {
      const res = await post(tokens[argentine.sellerId]!, {
        payment: { currency: 'USD', amount: 150000 },
        product: [{ title: 'Mate', value: 150000, quantity: 1 }],
        customer: customerOf('AR', 'DNI', '30111222'),
        configurations: { '3ds': false, card_verification: false, preauthorization: false },
      });
      expect(res.status).toBe(201);
      expect(res.body.trade_name).toBe('Tienda Palermo');
      const stored = await webCheckoutRepository(server.store).findPaymentIntent(argentine.sellerId, res.body.payment_intent_id);
      expect(stored).toMatchObject({ sellerId: argentine.sellerId, flow: 'standard', currency: 'USD', fraudPreventionDenial: false });
    });

    it('creates a UY-style intent for an MX seller only with RFC and MXN', async () => {
      const res = await post(tokens[mexican.sellerId]!, {
        payment: { currency: 'MXN', amount: 49900 },
        product: [{ title: 'Taza', value: 49900, quantity: 1 }],
        customer: customerOf('MX', 'RFC', 'XAXX010101000'),
      });
      expect(res.status).toBe(201);
      expect(res.body.trade_name).toBe('Tienda Coyoacán');
    });
  });

  describe('400', () => {
    it('names at most 20 broken fields, however many the body has (1 MB of nested wrong items was a 64 MB answer)', async () => {
      const res = await post(demoToken, { ...standard(), product: Array.from({ length: 1_199 }, () => ({ title: 1, amount: 'x', quantity: 'y' })) });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.details).toHaveLength(20);
      expect(new Set(res.body.details.map((d: { field: string }) => d.field)).size).toBe(20);
      expect(res.text.length).toBeLessThan(10_000);
      await expectNothingStored();
    });

    it('answers a standard flow without payment and product with invalid_request', async () => {
      const { payment: _p, product: _q, ...body } = standard();
      expectError(await post(demoToken, body), 400, { code: 'invalid_request', message: 'One or more required fields are missing', details: [{ field: 'payment', message: 'payment is required' }, { field: 'product', message: 'product is required' }] });
      await expectNothingStored();
    });

    it('answers a missing customer with invalid_request', async () => {
      const { customer: _c, ...body } = standard();
      expectError(await post(demoToken, body), 400, { code: 'invalid_request', message: 'One or more required fields are missing', details: [{ field: 'customer', message: 'customer is required' }] });
      await expectNothingStored();
    });

    it('answers a missing nested field (a rate without its value) with invalid_request', async () => {
      const body = { ...standard(), additional_data: { rates: [{ key: 'ICMS' }] } };
      expectError(await post(demoToken, body), 400, {
        code: 'invalid_request',
        message: 'One or more required fields are missing',
        details: [{ field: 'additional_data.rates.0.value', message: 'additional_data.rates.0.value is required' }],
      });
    });

    it('answers a body that is not an object, or no body at all, with invalid_request', async () => {
      expectError(await post(demoToken, [standard()]), 400, { code: 'invalid_request', message: 'One or more required fields are missing', details: [{ message: 'body must be object' }] });
      const absent = await server.http.post(PATH).set('Authorization', `Bearer ${demoToken}`);
      const message = 'The request body must be a JSON object (Content-Type: application/json)';
      expectError(absent, 400, { code: 'invalid_request', message, details: [{ message }] });
      await expectNothingStored();
    });

    it('answers a token whose seller id is not a GUID with guid_error', async () => {
      const token = await mintToken(server, 'seller-123');
      expectError(await post(token, standard()), 400, {
        code: 'guid_error',
        message: 'The seller id must be a valid GUID',
        details: [{ field: 'token.x-seller-id', message: '"seller-123" is not a valid GUID' }],
      });
      await expectNothingStored();
    });
  });

  describe('401', () => {
    it.each([
      ['no token', undefined],
      ['a malformed token', 'Bearer not-a-jwt'],
      ['another scheme', `Basic ${Buffer.from('demo-seller-client:demo-seller-secret').toString('base64')}`],
    ])('answers %s with the plain string Unauthorized', async (_name, authorization) => {
      const req = server.http.post(PATH);
      const res = await (authorization ? req.set('Authorization', authorization) : req).send(standard());
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="payment-platform"/);
      expect(res.text).toBe('Unauthorized');
      await expectNothingStored();
    });
  });

  describe('403', () => {
    it('answers a seller whose checkout service is off with service_not_enabled', async () => {
      expectError(await post(tokens[checkoutOff.sellerId]!, standard()), 403, {
        code: 'service_not_enabled',
        message: 'The checkout service is not enabled for this seller',
        details: [{ field: 'services.checkout', message: 'service checkout is not enabled' }],
      });
      await expectNothingStored();
    });

    it.each([
      ['card_verification', cardVerification],
      ['preauthorization', preauthorization],
    ])('answers %s without the seller service with service_not_enabled', async (service, body) => {
      expectError(await post(tokens[flowsOff.sellerId]!, body()), 403, {
        code: 'service_not_enabled',
        message: `The ${service} service is not enabled for this seller`,
        details: [{ field: `services.${service}`, message: `service ${service} is not enabled` }],
      });
      await expectNothingStored();
    });
  });

  describe('404', () => {
    it('answers when the token\'s seller no longer exists', async () => {
      const gone = await insertSeller(server.store);
      const token = await tokenOf(server, gone);
      await server.store.query('DELETE FROM sellers WHERE seller_id = $1', [gone.sellerId]);
      expectError(await post(token, standard()), 404, {
        code: 'not_found',
        message: 'Seller not found',
        details: [{ field: 'token.x-seller-id', message: `No seller with id ${gone.sellerId}` }],
      });
      await expectNothingStored();
    });
  });

  describe('422', () => {
    it('answers a card verification carrying a payment with validation_error', async () => {
      expectError(await post(demoToken, { ...cardVerification(), payment: { currency: 'BRL', amount: 100 } }), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ message: 'payment and product must be omitted when configurations.card_verification is true' }],
      });
      await expectNothingStored();
    });

    it('answers card_verification and preauthorization both true with validation_error', async () => {
      expectError(await post(demoToken, { ...cardVerification(), configurations: { card_verification: true, preauthorization: true } }), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ field: 'configurations', message: 'card_verification and preauthorization cannot both be true' }],
      });
      await expectNothingStored();
    });

    it.each([
      ['a postal code too long', (b: any) => (b.customer.billing_address.postal_code = '013102001'), 'customer.billing_address.postal_code', 'must NOT have more than 8 characters'],
      ['a fractional shipping amount', (b: any) => (b.shipping.shipping_amount = 29.9), 'shipping.shipping_amount', 'must be integer'],
      ['a zero amount', (b: any) => (b.payment.amount = 0), 'payment.amount', 'must be >= 1'],
      ['a lower-case currency', (b: any) => (b.payment.currency = 'brl'), 'payment.currency', 'must match pattern "^[A-Z]{3}$"'],
      ['an e-mail without @', (b: any) => (b.customer.email = 'maria.example.com'), 'customer.email', 'must match format "email"'],
      ['a customer_id with separators', (b: any) => (b.customer.customer_id = '529.982.247-25'), 'customer.customer_id', 'must match pattern "^[A-Za-z0-9]+$"'],
      ['an unknown document type', (b: any) => (b.customer.document_type = 'SSN'), 'customer.document_type', 'must be equal to one of the allowed values: CPF, CNPJ, DNI, RUT, RFC, CI'],
    ])('answers %s with validation_error', async (_name, breakIt, field, message) => {
      const body = standard();
      breakIt(body);
      expectError(await post(demoToken, body), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ field, message: `${field} ${message}` }],
      });
      await expectNothingStored();
    });

    it('answers an AR seller asking for 3ds, card_verification or preauthorization with country_rule_violation', async () => {
      const token = tokens[argentine.sellerId]!;
      const ar = { payment: { currency: 'ARS', amount: 100 }, product: [{ title: 'Mate', value: 100, quantity: 1 }], customer: customerOf('AR', 'DNI', '30111222') };
      expectError(await post(token, { ...ar, configurations: { '3ds': true, preauthorization: true } }), 422, {
        code: 'country_rule_violation',
        message: "One or more fields are not allowed in the seller's country",
        details: [
          { field: 'configurations.3ds', message: '3ds is unavailable for AR' },
          { field: 'configurations.preauthorization', message: 'preauthorization is unavailable for AR' },
        ],
      });
      const { payment: _p, product: _q, ...verification } = ar;
      expectError(await post(token, { ...verification, configurations: { card_verification: true } }), 422, {
        code: 'country_rule_violation',
        message: "One or more fields are not allowed in the seller's country",
        details: [{ field: 'configurations.card_verification', message: 'card_verification is unavailable for AR' }],
      });
      await expectNothingStored();
    });

    it.each([
      ['BR', 'DNI', 'allowed: CPF, CNPJ'],
      ['MX', 'CPF', 'allowed: RFC'],
      ['AR', 'CPF', 'allowed: DNI'],
    ])('answers a %s seller sending document_type %s with country_rule_violation', async (country, type, allowed) => {
      const token = { BR: demoToken, MX: tokens[mexican.sellerId]!, AR: tokens[argentine.sellerId]! }[country]!;
      const currency = { BR: 'BRL', MX: 'MXN', AR: 'ARS' }[country]!;
      const res = await post(token, { payment: { currency, amount: 100 }, product: [{ title: 'X', value: 100, quantity: 1 }], customer: customerOf(country, type, '52998224725') });
      expectError(res, 422, {
        code: 'country_rule_violation',
        message: "One or more fields are not allowed in the seller's country",
        details: [{ field: 'customer.document_type', message: `${type} is not allowed for a ${country} seller (${allowed})` }],
      });
      await expectNothingStored();
    });

    it('answers a BR document_number that is not a valid CPF (or CNPJ) with validation_error', async () => {
      const body = standard();
      body.customer.document_number = '52998224700';
      expectError(await post(demoToken, body), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ field: 'customer.document_number', message: '"52998224700" is not a valid CPF' }],
      });
      body.customer = { ...body.customer, document_type: 'CNPJ', document_number: '11222333000100' };
      expectError(await post(demoToken, body), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ field: 'customer.document_number', message: '"11222333000100" is not a valid CNPJ' }],
      });
      await expectNothingStored();
    });

    it('answers a currency the seller does not charge in with validation_error', async () => {
      const body = standard();
      body.payment.currency = 'USD';
      expectError(await post(demoToken, body), 422, {
        code: 'validation_error',
        message: 'One or more fields failed validation',
        details: [{ field: 'payment.currency', message: "USD is not one of the seller's currencies (BRL)" }],
      });
      await expectNothingStored();
    });
  });

  describe('seller isolation', () => {
    it('finds an intent only with the seller that created it', async () => {
      const res = await post(tokens[mexican.sellerId]!, {
        payment: { currency: 'MXN', amount: 100 },
        product: [{ title: 'Taza', value: 100, quantity: 1 }],
        customer: customerOf('MX', 'RFC', 'XAXX010101000'),
      });
      const id = res.body.payment_intent_id;
      const repository = webCheckoutRepository(server.store);
      expect((await repository.findPaymentIntent(mexican.sellerId, id))?.paymentIntentId).toBe(id);
      expect(await repository.findPaymentIntent(argentine.sellerId, id)).toBeUndefined();
      expect(await repository.findPaymentIntent(DEMO_SELLER_ID, id)).toBeUndefined();
    });
  });
});
