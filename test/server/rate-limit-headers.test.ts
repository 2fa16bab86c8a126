// The contract's shared 429: one operation per area answers it with Retry-After and the IETF
// RateLimit / RateLimit-Policy fields (draft 8, as express-rate-limit writes them), and a body in
// the area's own error shape, as the area's shared TooManyRequests response documents it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractValidator, loadPlatform, operationsOf, responsePointer } from '../support/contract.ts';
import { startTestServer, tokenForm, type TestServer } from './support/server.ts';

const PLATFORM_JSON = new URL('../../generated/platform.openapi.json', import.meta.url).pathname;
const doc = loadPlatform();
const validate = contractValidator(doc);
const op = (operationId: string) => operationsOf(doc).find((o) => o.operationId === operationId)!;

// One operation per area and how it is keyed: by the token's client, or by the caller's address.
const ONE_PER_AREA: Array<{ operationId: string; url: string; key: 'client' | 'address' | 'admin' }> = [
  { operationId: 'issueAccessToken', url: '/authentication/oauth2/-core/access_token', key: 'address' },
  { operationId: 'getSeller', url: '/dpy/payment-link/v1/sellers', key: 'client' },
  { operationId: 'updateTechnicalConfiguration', url: '/dpy/web-checkout/v1/technical-configurations', key: 'client' },
  { operationId: 'getSubscription', url: '/rpy/be-subscription/v1/subscriptions/4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b', key: 'client' },
  { operationId: 'updatePlanStatus', url: '/rpy/be-plan/v1/plans/4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b/status/active', key: 'client' },
  { operationId: 'applySubscriptionEvent', url: '/dpm/webhooks/v1/subscriptions/payment/events/4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b', key: 'client' },
  { operationId: 'listSandboxNotifications', url: '/sandbox/v1/notifications', key: 'admin' },
];

/** A server limited to `limit` requests a minute, and the demo client's token, fetched by one counted request. */
async function limitedServer(limit: number) {
  const server = await startTestServer({ config: { apiSpec: PLATFORM_JSON, rateLimit: { limit, windowMs: 60_000 } } });
  const token = await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
  expect(token.status).toBe(200);
  return { server, token, bearer: `Bearer ${token.body.access_token}` };
}

describe('the shared 429 of every area', () => {
  let server: TestServer;
  let bearer: string;
  beforeAll(async () => {
    // The address's one request of the window, then the client's one.
    let token;
    ({ server, token, bearer } = await limitedServer(1));
    expect(token.headers['ratelimit']).toMatch(/^"per-client"; r=0; t=\d+$/);
    expect(token.headers['ratelimit-policy']).toMatch(/^"per-client"; q=1; w=60; pk=:[^:]+:$/);
    expect((await server.http.get('/dpy/payment-link/v1/sellers').set('Authorization', bearer)).status).toBe(200);
  });
  afterAll(() => server?.close());

  it.each(ONE_PER_AREA)('$operationId answers 429 with Retry-After, RateLimit, RateLimit-Policy and its area body', async ({ operationId, url, key }) => {
    const operation = op(operationId);
    let call = (server.http as any)[operation.method](url);
    if (key === 'client') call = call.set('Authorization', bearer);
    if (key === 'admin') call = call.set('Authorization', `Bearer ${server.config.sandboxAdminToken}`);
    if (key === 'address') call = call.type('form').send(tokenForm());
    const res = await call;
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(res.headers['ratelimit']).toMatch(/^"per-client"; r=0; t=\d+$/);
    expect(res.headers['ratelimit-policy']).toMatch(/^"per-client"; q=1; w=60; pk=:[^:]+:$/);
    // The headers and the body are the ones the area's shared response documents.
    const response = operation.operation.responses['429'];
    expect(response.$ref).toMatch(/^#\/components\/responses\/\w+TooManyRequests$/);
    const shared = doc.components.responses?.[response.$ref.split('/').pop()];
    expect(Object.keys(shared.headers)).toEqual(['Retry-After', 'RateLimit', 'RateLimit-Policy']);
    const check = validate(responsePointer(doc, operation, '429', 'application/json'));
    expect(check(res.body), JSON.stringify(check.errors)).toBe(true);
  });
});

describe('the RateLimit fields of a success', () => {
  it('are documented on every 2xx response of every operation, and sent on a counted 200', async () => {
    const undocumented = operationsOf(doc).flatMap((operation) =>
      Object.entries<any>(operation.operation.responses)
        .filter(([status, response]) => status.startsWith('2') && !('$ref' in response))
        .filter(([, response]) => !(response.headers?.RateLimit && response.headers?.['RateLimit-Policy']))
        .map(([status]) => `${operation.operationId} ${status}`),
    );
    expect(undocumented).toEqual([]);
    const server = await startTestServer({ config: { rateLimit: { limit: 5, windowMs: 1_000 } } });
    try {
      const res = await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit']).toMatch(/^"per-client"; r=4; t=1$/);
      expect(res.headers['ratelimit-policy']).toMatch(/^"per-client"; q=5; w=1; pk=:[^:]+:$/);
    } finally {
      await server.close();
    }
  });
});

describe('the RateLimit fields of a refusal', () => {
  let server: TestServer;
  let bearer: string;
  beforeAll(async () => {
    ({ server, bearer } = await limitedServer(50));
  });
  afterAll(() => server?.close());

  const unknownId = '4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b';
  // One refusal of each kind per area, each counted by the limiter: the fields are sent and documented.
  const REFUSALS: Array<{ operationId: string; status: number; send: (s: TestServer, bearer: string) => any }> = [
    { operationId: 'issueAccessToken', status: 400, send: (s) => s.http.post('/authentication/oauth2/-core/access_token').type('form').send({ grant_type: 'password' }) },
    {
      operationId: 'issueAccessTokenWithBasicAuth',
      status: 401,
      send: (s) => s.http.post('/authentication/oauth2/access_token').auth('unknown-client', 'wrong').type('form').send({ grant_type: 'client_credentials' }),
    },
    { operationId: 'listPaymentLinks', status: 400, send: (s, b) => s.http.get('/dpy/payment-link/v1/payment-links?limit=0').set('Authorization', b) },
    { operationId: 'getPaymentLinkOrder', status: 404, send: (s, b) => s.http.get(`/dpy/payment-link/v1/payment-links/${unknownId}/orders/${unknownId}`).set('Authorization', b) },
    { operationId: 'createPaymentIntent', status: 400, send: (s, b) => s.http.post('/dpy/web-checkout/v1/payment-intent').set('Authorization', b).send({}) },
    { operationId: 'getSubscription', status: 404, send: (s, b) => s.http.get(`/rpy/be-subscription/v1/subscriptions/${unknownId}`).set('Authorization', b) },
    { operationId: 'updatePlanStatus', status: 404, send: (s, b) => s.http.patch(`/rpy/be-plan/v1/plans/${unknownId}/status/active`).set('Authorization', b) },
    { operationId: 'createSandboxSeller', status: 400, send: (s) => s.http.post('/sandbox/v1/sellers').set('Authorization', `Bearer ${s.config.sandboxAdminToken}`).send({}) },
  ];

  it.each(REFUSALS)('$operationId answers $status with RateLimit and RateLimit-Policy, as documented', async ({ operationId, status, send }) => {
    const res = await send(server, bearer);
    expect(res.status).toBe(status);
    expect(res.headers['ratelimit']).toMatch(/^"per-client"; r=\d+; t=\d+$/);
    expect(res.headers['ratelimit-policy']).toMatch(/^"per-client"; q=50; w=60; pk=:[^:]+:$/);
    const operation = op(operationId);
    expect(operation, operationId).toBeDefined();
    const response = operation.operation.responses[String(status)];
    const documented = response.$ref ? doc.components.responses![response.$ref.split('/').pop()] : response;
    expect(Object.keys(documented.headers ?? {})).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
  });

  it('sends none on a refused bearer token, whose 401 documents none (counted by address, its fields left out)', async () => {
    const res = await server.http.get('/dpy/payment-link/v1/sellers').set('Authorization', 'Bearer not-a-token');
    expect(res.status).toBe(401);
    expect(res.headers['ratelimit']).toBeUndefined();
    expect(res.headers['ratelimit-policy']).toBeUndefined();
    const shared = doc.components.responses!.PaymentLinkUnauthorized as { headers?: Record<string, unknown> };
    expect(shared.headers?.RateLimit).toBeUndefined();
  });
});
