// The typed client against the reference server, for the flows that need state: real tokens from
// both token forms (one token request for parallel calls), a payment intent, a sandbox plan, a
// subscription read back, typed area errors and token endpoint errors. Token expiry and the 401
// refresh are proved against a counting token server in token.test.ts.
import { ADMIN } from '../server/support/server.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, isTokenEndpointError } from '../../client/index.ts';
import type { components } from '@payment-platform/contract/types';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, type TestServer } from '../server/support/server.ts';

const ADMIN_HEADERS = { Authorization: ADMIN };
const SELLER = '3fa85f64-5717-4562-b3fc-2c963f66afa6'; // the demo seller every sandbox starts with
// A whole payment intent request.
const INTENT: components['schemas']['PaymentIntentRequest'] = {
  payment: { currency: 'BRL', amount: 15990 },
  product: [{ product_type: 'physical_goods', title: 'Café especial 1 kg', value: 15990, quantity: 1 }],
  customer: {
    customer_id: '52998224725', first_name: 'Maria', last_name: 'Souza', name: 'Maria Souza', email: 'maria@example.com',
    document_type: 'CPF', document_number: '52998224725',
    billing_address: { street: 'Rua das Flores', number: '120', city: 'São Paulo', state: 'SP', country: 'BR', postal_code: '01310100' },
  },
};

describe('the client against the reference server', () => {
  let server: TestServer;
  const tokenRequests: string[] = [];
  // Counts token requests without seeing their bodies (the observe hook never gets secrets).
  const client = (tokenEndpoint: 'form' | 'basic') =>
    createPlatformClient({
      baseUrl: server.url,
      clientId: 'demo-seller-client',
      clientSecret: 'demo-seller-secret',
      tokenEndpoint,
      observe: (o) => {
        if (o.operationId?.startsWith('issueAccessToken')) tokenRequests.push(o.operationId);
      },
    });
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
  });
  afterAll(() => server?.close());

  it.each(['form', 'basic'] as const)('gets a real token through the %s endpoint and reads the seller', async (form) => {
    tokenRequests.length = 0;
    const platform = client(form);
    const [seller, defaults] = await Promise.all([
      platform.GET('/dpy/payment-link/v1/sellers'),
      platform.GET('/dpy/payment-link/v1/payment-links/business-configurations'),
    ]);
    expect(seller.data).toMatchObject({ seller_id: SELLER, country: 'BR', trade_name: 'Café da Montanha' });
    expect(defaults.data?.currency).toBe('BRL');
    expect(tokenRequests).toEqual([form === 'form' ? 'issueAccessToken' : 'issueAccessTokenWithBasicAuth']);
  });

  it('creates a payment intent and a subscription on a sandbox plan, and reads it back', async () => {
    const platform = client('form');
    const intent = await platform.POST('/dpy/web-checkout/v1/payment-intent', {
      body: INTENT,
    });
    expect(intent.response.status).toBe(201);
    expect(intent.data?.redirect_url).toBe(`${server.config.publicBaseUrl}/checkout/${intent.data?.payment_intent_id}`);

    const plan = await platform.POST('/sandbox/v1/plans', {
      headers: ADMIN_HEADERS,
      body: { seller_id: SELLER, name: 'Clube do Café', amount: 8990, currency: 'BRL', payment_types: 'credit_card', period: { type: 'monthly', billing_cycle: 12 } },
    });
    expect(plan.response.status).toBe(201);
    const created = await platform.POST('/rpy/be-subscription/v1/subscriptions', {
      body: {
        seller_id: SELLER,
        customer_id: '52998224725',
        plan_id: plan.data!.plan_id!,
        subscription: {
          payment_type: {
            credit: {
              transaction_type: 'FULL',
              number_installments: 1,
              card: { number_token: 'tok_sandbox_approved', bin: '411111', last_four_digits: '1111', expiration_month: '12', expiration_year: '30', security_code: '123' },
            },
          },
        },
      },
    });
    expect(created.response.status).toBe(201);
    const id = created.data!.subscription!.subscription_id;
    const read = await platform.GET('/rpy/be-subscription/v1/subscriptions/{subscription_id}', { params: { path: { subscription_id: id } } });
    expect(read.data).toMatchObject({ status: 'success', plan: { plan_id: plan.data!.plan_id }, payment: { status: 'approved', amount: 8990 } });
  });

  it('types the area errors the server answers', async () => {
    const platform = client('form');
    const missing = await platform.GET('/rpy/be-subscription/v1/subscriptions/{subscription_id}', {
      params: { path: { subscription_id: '9b2d5f4e-8c1a-4e7b-a3d6-5f0c2e8b1a47' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ message: 'Signature not found', name: 'be-subscription', status_code: 404 });
    const link = await platform.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'NOPE1234' } } });
    expect(link.error).toMatchObject({ error_code: 'payment_link_not_found', status_code: 404 });
  });

  it('names the first problem of a 400 in the failure message, with how many more', async () => {
    const platform = client('form');
    const one = await platform.GET('/dpy/payment-link/v1/payment-links', { params: { query: { limit: 1000 } } });
    expect(one.failure?.message).toBe(`listPaymentLinks answered 400, invalid_request: Invalid request (${one.error && 'details' in one.error ? `${one.error.details![0]!.path}: ${one.error.details![0]!.message}` : ''})`);
    expect(one.failure?.message).toMatch(/\(query\.limit: .+\)$/);
    expect(one.failure?.platformMessage).toBe('Invalid request'); // the platform's own message, unchanged
    const two = await platform.GET('/dpy/payment-link/v1/payment-links', { params: { query: { limit: 1000, page: 0 } } });
    expect(two.failure?.message).toMatch(/ \(query\.\w+: .+, and 1 more\)$/);
  });

  it('surfaces wrong credentials as a typed token endpoint error', async () => {
    const platform = createPlatformClient({ baseUrl: server.url, clientId: 'demo-seller-client', clientSecret: 'wrong' });
    const failure = await platform.GET('/dpy/payment-link/v1/sellers').catch((e: unknown) => e);
    expect(isTokenEndpointError(failure)).toBe(true);
    expect((failure as { body?: unknown }).body).toEqual({ error_code: 'invalid_credentials', message: 'Invalid client credentials', status_code: 401 });
  });

  it('sends the token endpoints their form when they are called as typed operations', async () => {
    const sent: Array<{ type: string | null; body: string }> = [];
    const platform = createPlatformClient({
      baseUrl: server.url,
      clientId: 'demo-seller-client',
      clientSecret: 'demo-seller-secret',
      fetch: async (request) => {
        sent.push({ type: request.headers.get('content-type'), body: await request.clone().text() });
        return fetch(request);
      },
    });
    const form = await platform.POST('/authentication/oauth2/-core/access_token', {
      body: { grant_type: 'client_credentials', client_id: 'demo-seller-client', client_secret: 'demo-seller-secret', scope: 'digital-plataform:gateway-api' },
    });
    expect(form.response.status).toBe(200);
    expect(form.data).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) });
    expect(form.data?.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const basic = await platform.request('post', '/authentication/oauth2/access_token', {
      headers: { Authorization: `Basic ${Buffer.from('demo-seller-client:demo-seller-secret').toString('base64')}` },
      body: { grant_type: 'client_credentials' },
    });
    expect(basic.response.status).toBe(200);
    expect(basic.data?.access_token).toEqual(expect.any(String));
    expect(sent).toEqual([
      {
        type: 'application/x-www-form-urlencoded',
        body: 'grant_type=client_credentials&client_id=demo-seller-client&client_secret=demo-seller-secret&scope=digital-plataform%3Agateway-api',
      },
      { type: 'application/x-www-form-urlencoded', body: 'grant_type=client_credentials' },
    ]);

    // A content type the caller names is theirs: JSON is sent as asked, and refused in the token error shape.
    sent.length = 0;
    const json = await platform.POST('/authentication/oauth2/-core/access_token', {
      headers: { 'Content-Type': 'application/json' },
      body: { grant_type: 'client_credentials', client_id: 'demo-seller-client', client_secret: 'demo-seller-secret', scope: 'digital-plataform:gateway-api' },
    });
    expect(sent.map((r) => r.type)).toEqual(['application/json']);
    expect(json.response.status).toBe(400);
    expect(json.failure?.code).toBe('invalid_request');
    // JSON operations keep JSON (after the client's own token request, a form).
    sent.length = 0;
    await platform.POST('/dpy/web-checkout/v1/payment-intent', { body: INTENT });
    expect(sent.map((r) => r.type)).toEqual(['application/x-www-form-urlencoded', 'application/json']);
  });
});
