// What contract fuzzing found, pinned by name on the real server: each request here answered a
// status its operation does not document (or a 500) before the fix in server/http/errors.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/http/errors.ts';
import { asDocumented } from '../../server/http/error-normalising.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { rawRequest } from '../support/raw-http.ts';
import { createSeller, type SandboxSeller } from '../server/support/payment-link.ts';
import { startTestServer, type TestServer, ADMIN } from '../server/support/server.ts';

describe('asDocumented', () => {
  const op = (responses: string[], types = ['application/json']) => ({
    responses: Object.fromEntries(responses.map((s) => [s, {}])),
    requestBody: { content: Object.fromEntries(types.map((t) => [t, {}])) },
  });

  it('keeps a documented status, a 5xx, and anything outside the contract as they are', () => {
    const e = new ApiError(415, undefined, 'Unsupported media type');
    expect(asDocumented(e, op(['201', '415']))).toBe(e);
    expect(asDocumented(e, undefined)).toBe(e);
    const bug = new ApiError(500, undefined, 'Internal server error');
    expect(asDocumented(bug, op(['201']))).toBe(bug);
  });

  it('answers an undocumented 415 as 400 naming the media types the operation takes', () => {
    const e = asDocumented(new ApiError(415, undefined, 'Unsupported media type'), op(['200', '400'], ['application/x-www-form-urlencoded']));
    expect(e).toMatchObject({ status: 400, message: 'The request body must be application/x-www-form-urlencoded', problems: [{ location: 'body', pointer: '' }] });
  });

  it('answers an undocumented 400 as 404 and an undocumented 422 as 400 when those are documented', () => {
    expect(asDocumented(new ApiError(400, undefined, 'Invalid request'), op(['200', '404'])).status).toBe(404);
    expect(asDocumented(new ApiError(422, undefined, 'x'), op(['200', '400'])).status).toBe(400);
  });
});

describe('fuzzing findings on the server', () => {
  let server: TestServer;
  let seller: SandboxSeller;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
    seller = await createSeller(server);
  });
  afterAll(() => server?.close());

  it('an unreadable multipart body of the image upload is a 400, not a 500', async () => {
    const res = await server.http
      .post('/dpy/payment-link/v1/payment-links/products/images')
      .set('Authorization', `Bearer ${seller.token}`)
      .set('Content-Type', 'multipart/form-data; boundary=x')
      .send('not multipart');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error_code: 'invalid_request',
      message: 'The request body is not a readable multipart/form-data form',
      status_code: 400,
      details: [{ message: 'The request body is not a readable multipart/form-data form', path: 'body' }],
    });
  });

  it('an integer past the stored range (max_orders 2^53) is a 4xx and creates nothing', async () => {
    const res = await server.http
      .post('/sandbox/v1/payment-links')
      .set('Authorization', ADMIN)
      .send({ seller_id: seller.sellerId, label: 'Grande', type: 'custom', max_orders: 2 ** 53, products: [{ product_type: 'service', title: 'X', amount: 100 }] });
    // The contract bounds every integer (format int32 and a maximum): the validator refuses it (400).
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
    const stored = await server.store.query(`SELECT 1 FROM payment_links WHERE label = 'Grande'`);
    expect(stored.rowCount).toBe(0);
  });

  it('an unknown query parameter of the public short-id lookup is a 404 (the operation documents no 400)', async () => {
    const res = await server.http.get('/dpy/payment-link/v1/payment-links/by-short-id/Xk7pQ2aZ?unknown=1');
    expect(res.status).toBe(404);
    // Not the lookup's own 404 (the link may exist): the area's plain one, which PaymentLinkError lists.
    expect(res.body).toEqual({ error_code: 'not_found', message: 'Not found', status_code: 404 });
  });

  it('a short id that does not decode (`%`) is a 404, not an undocumented 400 (the lookup documents no 400)', async () => {
    const res = await rawRequest(server.url, { method: 'GET', path: '/dpy/payment-link/v1/payment-links/by-short-id/%' });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({ error_code: 'payment_link_not_found', message: 'Payment Link not found', status_code: 404 });
  });

  it('a JSON body on a sandbox call that takes JSON with the wrong Content-Type is a 400', async () => {
    const res = await server.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).set('Content-Type', 'text/plain').send('{}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', message: 'The request body must be a JSON object (Content-Type: application/json)', status_code: 400 });
  });
});

describe('fuzzing findings before the validator', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
  });
  afterAll(() => server?.close());

  it('a JSON body in a charset the parser cannot read is a 400 in the area shape, not an undocumented 415', async () => {
    const res = await server.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).set('Content-Type', 'application/json; charset=latin1').send('{}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error_code: 'invalid_request',
      message: 'The request body charset is not supported',
      status_code: 400,
      details: [{ message: 'The request body charset is not supported', path: 'body' }],
    });
  });
});

describe('fuzzing findings: integers in exponent form', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
  });
  afterAll(() => server?.close());

  it('a billing_cycle of 1e308 (a JSON Schema integer) is a 4xx, not a 500', async () => {
    const res = await server.http
      .post('/sandbox/v1/plans')
      .set('Authorization', ADMIN)
      .set('Content-Type', 'application/json')
      .send('{"seller_id":"3fa85f64-5717-4562-b3fc-2c963f66afa6","name":"P","amount":9990,"currency":"BRL","payment_types":"credit_card","product_type":"service","period":{"type":"monthly","billing_cycle":1e308}}');
    // Bounded by the contract (format int32 and a maximum): the validator refuses it (400).
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
  });
});
