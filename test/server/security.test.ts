// Authentication follows the contract's security and comes first: without valid credentials a
// protected operation answers its area's 401 whatever else is wrong with the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, tokenForm, type TestServer } from './support/server.ts';

describe('authentication before validation', () => {
  let server: TestServer;
  let bearer: string;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
    const res = await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
    bearer = `Bearer ${res.body.access_token}`;
  });
  afterAll(() => server?.close());

  it('answers 401 to a protected call with a bad query and no token, then 400 once the token is valid', async () => {
    const anonymous = await server.http.get('/dpy/payment-link/v1/payment-links?limit=abc');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error_code: 'unauthorized', status_code: 401 });
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    const authenticated = await server.http.get('/dpy/payment-link/v1/payment-links?limit=abc').set('Authorization', bearer);
    expect(authenticated.status).toBe(400);
    expect(authenticated.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
  });

  it('answers 401 in the recurrence shape to an invalid body without a token', async () => {
    const res = await server.http.post('/rpy/be-subscription/v1/subscriptions').send({});
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ name: 'be-subscription', status_code: 401, message: 'Unauthorized' });
  });

  it('answers the plain-text 401 of payment intent creation before looking at the body', async () => {
    const res = await server.http.post('/dpy/web-checkout/v1/payment-intent').set('Content-Type', 'application/json').send('{');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Unauthorized');
  });

  it('guards the sandbox area with the administration token, not with a seller token', async () => {
    const anonymous = await server.http.post('/sandbox/v1/plans').send({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error_code: 'unauthorized', status_code: 401 });
    const sellerToken = await server.http.post('/sandbox/v1/plans').set('Authorization', bearer).send({});
    expect(sellerToken.status).toBe(401);
    const admin = await server.http.post('/sandbox/v1/plans').set('Authorization', 'Bearer sandbox-admin-token').send({});
    expect(admin.status).toBe(400);
  });

  it('leaves the public short-id lookup and the key set open', async () => {
    const link = await server.http.get('/dpy/payment-link/v1/payment-links/by-short-id/NOPE1234');
    expect(link.status).toBe(404);
    expect(link.body).toMatchObject({ error_code: 'payment_link_not_found' });
    expect((await server.http.get('/sandbox/v1/jwks')).status).toBe(200);
  });
});
