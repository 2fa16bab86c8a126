// The contract's rate limit decision: per client, 429 with Retry-After in the area's error body;
// refused tokens and admin tokens counted by address; the hosted pages by address, apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, tokenForm, type TestServer } from './support/server.ts';

describe('per-client rate limit', () => {
  let server: TestServer;
  let bearer: string;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE, rateLimit: { limit: 5, windowMs: 60_000 } } });
    const res = await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
    bearer = `Bearer ${res.body.access_token}`;
  });
  afterAll(() => server?.close());

  it('answers 429 with Retry-After in the area body once a client is over its limit, in each area body', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await server.http.get('/dpy/payment-link/v1/sellers').set('Authorization', bearer)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await server.http.get('/dpy/payment-link/v1/sellers').set('Authorization', bearer);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({ error_code: 'too_many_requests', message: 'Too many requests, retry after the time in Retry-After', status_code: 429 });

    const subscription = await server.http.get('/rpy/be-subscription/v1/subscriptions/4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b').set('Authorization', bearer);
    expect(subscription.status).toBe(429);
    expect(subscription.body).toMatchObject({ message: 'Too many requests', name: 'be-subscription', status_code: 429 });
  });

  it('counts callers without a token by address, apart from the token client', async () => {
    // The token endpoint had one request from this address (beforeAll); four more are allowed.
    for (let i = 0; i < 4; i++) expect((await server.http.get('/sandbox/v1/jwks')).status).toBe(200);
    const limited = await server.http.get('/sandbox/v1/jwks');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error_code: 'too_many_requests', status_code: 429 });
  });

  it('counts refused tokens and admin tokens by address, so guessing them is bounded too', async () => {
    const fresh = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE, rateLimit: { limit: 4, windowMs: 60_000 } } });
    try {
      const token = await fresh.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm()); // 1 for the address
      const forged = () => fresh.http.get('/dpy/payment-link/v1/sellers').set('Authorization', 'Bearer eyJhbGciOiJub25lIn0.e30.');
      const wrongAdmin = () => fresh.http.get('/sandbox/v1/notifications').set('Authorization', 'Bearer not-the-admin-token');
      expect([(await forged()).status, (await wrongAdmin()).status, (await forged()).status]).toEqual([401, 401, 401]);
      const limited = await forged();
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.body).toEqual({ error_code: 'too_many_requests', message: 'Too many requests, retry after the time in Retry-After', status_code: 429 });
      const admin = await wrongAdmin();
      expect(admin.status).toBe(429);
      expect(admin.body).toMatchObject({ error_code: 'too_many_requests', status_code: 429 });
      // A verified token is counted as its client, not as the address: it still answers.
      const verified = await fresh.http.get('/dpy/payment-link/v1/sellers').set('Authorization', `Bearer ${token.body.access_token}`);
      expect(verified.status).toBe(200);
    } finally {
      await fresh.close();
    }
  });

  it('counts the hosted pages by address apart from the API, answering a plain-text 429', async () => {
    const fresh = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE, rateLimit: { limit: 2, windowMs: 60_000 } } });
    try {
      const pay = () => fresh.http.post('/pay/nothing-here').type('form').send({ method: 'google_pay' });
      expect([(await pay()).status, (await fresh.http.get('/checkout/4b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b')).status]).toEqual([404, 404]);
      const limited = await pay();
      expect(limited.status).toBe(429);
      expect(limited.headers['content-type']).toMatch(/^text\/plain/);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.text).toMatch(/^Too many requests from this address: retry in \d+ s\.$/);
      // The API's budget for this address is its own.
      expect((await fresh.http.get('/sandbox/v1/jwks')).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
