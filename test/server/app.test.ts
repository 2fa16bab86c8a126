// The request path of the app: bearer check, every area's error shape, contract violations in
// both directions, unknown routes, body parser errors, request ids and log redaction.
import { gzipSync } from 'node:zlib';
import { SignJWT } from 'jose';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys, type SigningKeys } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { createLogger } from '../../server/http/logging.ts';
import { contractValidator } from '../../server/http/contract-validator.ts';
import { CapturedLogs, expectNoStackTrace, GATEWAY_SCOPE, ISSUER, startTestServer, tokenForm, type TestServer } from './support/server.ts';
import { testAreas, writeTestSpec } from './support/test-areas.ts';
import { unendedRequest } from '../support/unended-request.ts';

let sandbox: TestServer;
let keys: SigningKeys;
let token: string;
beforeAll(async () => {
  sandbox = await startTestServer({ config: { apiSpec: await writeTestSpec() }, extraAreas: [testAreas] });
  keys = await loadSigningKeys(authenticationRepository(sandbox.store));
  token = (await sandbox.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
});
afterAll(() => sandbox.close());

const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const now = () => Math.floor(Date.now() / 1000);
const signed = (claims: Record<string, unknown>) =>
  new SignJWT({ 'x-seller-id': '3fa85f64-5717-4562-b3fc-2c963f66afa6', country: 'BR', tenant: 'sandbox', scope: GATEWAY_SCOPE, sub: 'c', iss: ISSUER, iat: now(), exp: now() + 60, jti: 'j', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: keys.kid, typ: 'JWT' }) // as the server's own tokens
    .sign(keys.privateKey);

/** An error answer: its status, its exact body, JSON, and no stack trace. */
function expectError(res: Response, status: number, body: unknown) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expectNoStackTrace(res.body);
}

describe('bearer authentication (payment link shape)', () => {
  it('answers 401 without a token, naming the scheme', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/sellers');
    expectError(res, 401, { error_code: 'unauthorized', message: 'Missing bearer token', status_code: 401 });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="payment-platform"');
  });

  it('answers 401 for an expired token', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(await signed({ iat: now() - 4000, exp: now() - 400 })));
    expectError(res, 401, { error_code: 'unauthorized', message: 'The access token has expired', status_code: 401 });
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('answers 401 for a token without the gateway scope', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(await signed({ scope: 'other' })));
    expectError(res, 401, { error_code: 'unauthorized', message: `The access token lacks the scope ${GATEWAY_SCOPE}`, status_code: 401 });
  });

  it('lets a valid token through with its claims on the request', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ seller_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6' });
  });

  it('leaves a non-GUID seller id to the area, which answers the seed guid_error', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(await signed({ 'x-seller-id': 'seller-42' })));
    expectError(res, 400, {
      error_code: 'guid_error',
      message: 'The seller id must be a valid GUID',
      status_code: 400,
      details: [{ message: 'x-seller-id must be a valid GUID', path: 'token.x-seller-id' }],
    });
  });
});

describe('web checkout shape', () => {
  const intent = () => sandbox.http.post('/dpy/web-checkout/v1/payment-intent');

  it('answers 401 on payment intent creation as the plain string of the seed', async () => {
    const res = await intent().send({ payment: { amount: 100, currency: 'BRL' } });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Unauthorized');
  });

  it('answers a missing field with 400 invalid_request', async () => {
    const res = await intent().set(bearer(token)).send({});
    expectError(res, 400, { code: 'invalid_request', message: 'One or more required fields are missing', details: [{ field: 'payment', message: 'payment is required' }] });
  });

  it('answers a present field that breaks a rule with 422 validation_error', async () => {
    const res = await intent().set(bearer(token)).send({ payment: { amount: 0, currency: 'BRL' } });
    expectError(res, 422, {
      code: 'validation_error',
      message: 'One or more fields failed validation',
      details: [{ field: 'payment.amount', message: 'payment.amount must be >= 1' }],
    });
  });

  it('answers malformed JSON with 400 in the area shape', async () => {
    const res = await intent().set(bearer(token)).set('Content-Type', 'application/json').send('{"payment": {');
    expectError(res, 400, { code: 'invalid_request', message: 'The request body is not valid JSON', details: [{ message: 'The request body is not valid JSON' }] });
  });

  it('answers a body over the limit with 413 in the area shape', async () => {
    const res = await intent().set(bearer(token)).send({ payment: { amount: 1, currency: 'BRL' }, padding: 'x'.repeat(2 * 1024 * 1024) });
    expectError(res, 413, { code: 'payload_too_large', message: 'Request body too large', details: [] });
  });

  it('refuses a JSON body sent chunked or compressed before reading it (400), closing the connection', async () => {
    const url = `${sandbox.url}/dpy/web-checkout/v1/payment-intent`;
    const headers = { ...bearer(token), 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' };
    const message = 'A request body must be sent with its Content-Length (a chunked body is not read)';
    const refused = { status: 400, body: { code: 'invalid_request', message, details: [{ message }] }, connection: 'close', closedBySandbox: true };
    expect(await unendedRequest(url, { headers, first: '{"payment":{"amount":1000,"currency":"BRL"}}' })).toEqual(refused);
    // Compressed, with its length or not, it is refused unread: the contract documents no compressed request.
    const gzipped = gzipSync('{"payment":{"amount":1000,"currency":"BRL"}}');
    const compressed = 'The request body must not be compressed (a Content-Encoding other than identity is not read)';
    const compressedRefusal = { ...refused, body: { code: 'invalid_request', message: compressed, details: [{ message: compressed }] } };
    expect(await unendedRequest(url, { headers: { ...headers, 'Content-Encoding': 'gzip' }, first: gzipped })).toEqual(compressedRefusal);
    const sized = await fetch(url, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body: new Uint8Array(gzipped) });
    expect([sized.status, await sized.json()]).toEqual([400, compressedRefusal.body]);
  });

  it('refuses a JSON body nested deeper than 32 levels before parsing it; brackets inside strings do not count', async () => {
    const nested = (depth: number) => `{"payment":{"amount":1000,"currency":"BRL"},"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const create = (body: string) => intent().set(bearer(token)).set('Content-Type', 'application/json').send(body);
    const deep = await create(nested(33));
    const message = 'The request body nests deeper than 32 levels';
    expectError(deep, 400, { code: 'invalid_request', message, details: [{ message }] });
    // 32 levels are read (the intent's unknown member is ignored, as the contract lets it be).
    const within = await create(nested(32));
    expect(within.status).toBe(201);
    expect(within.body.payment_intent_id).toEqual(expect.any(String));
    // Brackets and escaped quotes inside a string are text.
    const text = await create(JSON.stringify({ payment: { amount: 1000, currency: 'BRL' }, x: `[{"\\${'['.repeat(40)}` }));
    expect(text.status).toBe(201);
  });

  it('refuses a JSON object of more than 100 members before parsing it, any object (1 MB of one object held the event loop ~150 ms)', async () => {
    const create = (body: string) => intent().set(bearer(token)).set('Content-Type', 'application/json').send(body);
    const members = (n: number, value = '0') => Array.from({ length: n }, (_, i) => `"k${i}":${value}`).join(',');
    const message = 'The request body has an object of more than 100 members';
    const refused = { code: 'invalid_request', message, details: [{ message }] };
    // 1 MB of short keys in one object (spreading them into one call once overflowed the stack and ended the process).
    const chars = [...Array(95)].map((_, i) => String.fromCharCode(32 + i)).filter((c) => c !== '"' && c !== '\\');
    const keys = Array.from({ length: 130_000 }, (_, i) => `"${chars[i % 93]}${chars[Math.floor(i / 93) % 93]}${chars[Math.floor(i / 8649)]}":0`);
    const wide = `{${keys.join(',')}}`;
    expect(wide.length).toBeLessThan(1024 * 1024);
    expectError(await create(wide), 400, refused);
    // Any object counts, at any depth, the contract's own (the customer's address) or an unknown member's.
    const pay = '"payment":{"amount":1000,"currency":"BRL"}';
    expectError(await create(`{${pay},"customer":{"billing_address":{${members(101, '"x"')}}}}`), 400, refused);
    expectError(await create(`{${pay},"x":[{}, {${members(101)}}]}`), 400, refused);
    expectError(await create(`{${pay},${members(100)}}`), 400, refused); // the top level's 101st member is the payment
    // 100 members are read; commas inside strings and escaped quotes are text.
    const within = await create(`{${pay},"x":{${members(100, '",\\",,"')}},"y":"${',\\"'.repeat(500)}"}`);
    expect(within.status).toBe(201); // read and passed on: unknown members are ignored, as the contract lets them be
    expect(within.body.payment_intent_id).toEqual(expect.any(String));
    const after = await intent().set(bearer(token)).send({ payment: { amount: 1000, currency: 'BRL' } });
    expect(after.status).toBe(201);
  });

  it('refuses a JSON body of more than 10,000 members and items in all before parsing it (objects with keys of their own cost the parse seconds)', async () => {
    const create = (body: string) => intent().set(bearer(token)).set('Content-Type', 'application/json').send(body);
    const message = 'The request body has more than 10000 members and items in all';
    // 4 members (payment, amount, currency, x), x's 9 arrays, and their items.
    const body = (inner: number) => {
      const arrays = Array.from({ length: 9 }, (_, i) => `[${Array(i < 8 ? 1200 : inner - 8 * 1200).fill('0').join(', ')}]`);
      return `{ "payment": { "amount": 1000, "currency": "BRL" }, "x": [ ${arrays.join(' ,\n')} ] }`;
    };
    const within = await create(body(10_000 - 4 - 9));
    expect(within.status).toBe(201); // read and passed on: the unknown member is ignored
    expect(within.body.payment_intent_id).toEqual(expect.any(String));
    expectError(await create(body(10_000 - 4 - 9 + 1)), 400, { code: 'invalid_request', message, details: [{ message }] });
    // Objects count their members, empty containers nothing, a string's commas and brackets are text:
    // 3 (payment, amount, currency) + 5 arrays + 2,498 objects of 3 members (4 each) = 10,000.
    const object = (m = '{ }') => `{"k":"a,b,[c],{d}","l":[ ],"m":${m}}`;
    const objects = (lengths: number[], last = '{ }') =>
      `{"payment":{"amount":1000,"currency":"BRL"},${lengths.map((n, a) => `"x${a}":[${Array.from({ length: n }, (_, i) => object(a === 2 && i === n - 1 ? last : undefined)).join(',')}]`).join(',')}}`;
    const exact = await create(objects([1200, 1200, 98, 0, 0]));
    expect(exact.status).toBe(201);
    expect(exact.body.payment_intent_id).toEqual(expect.any(String));
    expectError(await create(objects([1200, 1200, 98, 0, 0], '{"n":0}')), 400, { code: 'invalid_request', message, details: [{ message }] });
  });

  it('refuses a JSON array of more than 1200 items before parsing it, fast (the validator takes seconds over long broken arrays)', async () => {
    const create = (body: string) => intent().set(bearer(token)).set('Content-Type', 'application/json').send(body);
    const body = (items: number, extra = '') => `{"payment":{"currency":"BRL","amount":1},"product":[${Array(items).fill('{}').join(',')}],"customer":{}${extra}}`;
    const message = 'The request body has an array of more than 1200 items';
    const started = performance.now();
    const long = await create(body(20_000));
    expect(performance.now() - started).toBeLessThan(2_000); // 11 s before; bounded loosely, a loaded machine is slow
    expectError(long, 400, { code: 'invalid_request', message, details: [{ message }] });
    // Any array counts, the contract's own or not; 1200 items are read, commas inside strings are text.
    expect((await create(body(1, `,"x":[${Array(1201).fill('0').join(',')}]`))).body.message).toBe(message);
    const within = await create(body(1, `,"x":[${Array(1200).fill('","').join(',')}]`));
    expect(within.status).toBe(201); // read and passed on: the extra member is ignored, as the contract lets it be
    expect(within.body.payment_intent_id).toEqual(expect.any(String));
  });

  it('refuses strings that are not text in unknown members with a small answer, however many and however long their names', async () => {
    const leaves = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, '\u0001']));
    const send = (x: unknown) => intent().set(bearer(token)).set('Content-Type', 'application/json').send(JSON.stringify({ payment: { amount: 1000, currency: 'BRL' }, x }));
    const started = performance.now();
    const long = await send({ ['K'.repeat(100_000)]: leaves });
    expect(performance.now() - started).toBeLessThan(2_000); // 7 s and a 200 MB answer before; 500 KB ended the process
    expect(long.status).toBe(422);
    expect(long.text.length).toBeLessThan(2_000);
    expect(long.body.details.map((d: { field: string }) => d.field)).toEqual([`x.${'K'.repeat(196)}…`]);
    const many = await send(leaves);
    expect(many.status).toBe(422);
    expect(many.body.details).toHaveLength(20);
    expectNoStackTrace(many.body);
  });

  it('takes a JSON body in UTF-8 only: UTF-7 and UTF-16 hid the brackets and commas of a long array or a deep nesting from the checks above', async () => {
    const create = (charset: string, body: Buffer | string) => intent().set(bearer(token)).set('Content-Type', `application/json; charset=${charset}`).send(body);
    const products = `{"payment":{"currency":"BRL","amount":1},"product":[${Array(20_000).fill('{}').join(',')}],"customer":{}}`;
    // In UTF-7 `[`, `{` and `,` may be written +AFs-, +AHs- and +ACw-: bytes the checks do not count.
    const utf7 = products.replace(/,/g, '+ACw-').replace(/\[/g, '+AFs-').replace(/\{/g, '+AHs-');
    const message = 'The request body charset is not supported';
    const refused = { code: 'invalid_request', message, details: [{ message }] };
    const started = performance.now();
    expectError(await create('utf-7', utf7), 400, refused);
    expect(performance.now() - started).toBeLessThan(2_000); // the validator took ~10 s over this body
    expectError(await create('UTF-16BE', Buffer.from(products, 'utf16le').swap16()), 400, refused);
    expectError(await create('utf-16le', Buffer.from('{"payment":{"currency":"BRL","amount":1000}}', 'utf16le')), 400, refused);
    expect((await intent().set(bearer(token)).send({ payment: { amount: 1000, currency: 'BRL' } })).status).toBe(201);
    // UTF-8, spelt in any case, and no charset at all, are read.
    for (const charset of ['utf-8', 'UTF-8']) {
      const res = await create(charset, '{"payment":{"currency":"BRL","amount":1000}}');
      expect(res.status).toBe(201);
      expect(res.body.payment_intent_id).toEqual(expect.any(String));
    }
  });
});

describe('subscription, plan and webhook shape', () => {
  it('answers 401 with the fixed message and the module name', async () => {
    const res = await sandbox.http.patch('/rpy/be-plan/v1/plans/0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b/status/active');
    expectError(res, 401, { message: 'Unauthorized', name: 'be-plan', status_code: 401 });
  });

  it('answers a broken path parameter with 400 and one detail per broken rule', async () => {
    const res = await sandbox.http.patch('/rpy/be-plan/v1/plans/0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b/status/paused').set(bearer(token));
    expectError(res, 400, {
      message: 'Invalid request',
      name: 'be-plan',
      status_code: 400,
      details: [{ error_code: 'unknown_value', description: 'status must be equal to one of the allowed values: active, inactive', description_detail: 'path.status' }],
    });
  });

  it('answers an undecodable path (a lone %) with 400 saying so', async () => {
    const res = await sandbox.http.get('/rpy/be-subscription/v1/subscriptions/%').set(bearer(token));
    expectError(res, 400, {
      message: 'Invalid request',
      name: 'be-subscription',
      status_code: 400,
      details: [{ error_code: 'invalid_field', description: 'malformed uri', description_detail: '/rpy/be-subscription/v1/subscriptions/%' }],
    });
  });

  it('answers an unexpected failure with 500, revealing nothing, and logs it', async () => {
    const res = await sandbox.http.get('/rpy/be-subscription/v1/subscriptions/abc').set(bearer(token));
    expectError(res, 500, { message: 'Internal server error', name: 'be-subscription', status_code: 500 });
    expect(JSON.stringify(res.body)).not.toContain('secret-place');
    expect(sandbox.logs.lines.some((l) => l.msg === 'Unexpected error' && String(l.err?.stack).includes('secret-place'))).toBe(true);
  });

  it('answers a store that cannot be reached with the same 500, logged by its request line only: the store says the outage once', async () => {
    const res = await sandbox.http.get('/rpy/be-subscription/v1/subscriptions/store-down').set(bearer(token)).set('x-request-id', 'outage-7');
    expectError(res, 500, { message: 'Internal server error', name: 'be-subscription', status_code: 500 });
    expect(JSON.stringify(res.body)).not.toContain('db.example');
    const lines = sandbox.logs.lines.filter((l) => l.req?.id === 'outage-7');
    expect(lines.map((l) => [l.level, l.msg, l.res?.statusCode])).toEqual([[50, 'request completed', 500]]);
    expect(JSON.stringify(lines)).not.toContain('stack');
  });

  it('logs the failure bound to its request (id, method, url, redacted headers) and the request line at error', async () => {
    await sandbox.http.get('/rpy/be-subscription/v1/subscriptions/abc').set(bearer(token)).set('x-request-id', 'failure-42');
    const failure = sandbox.logs.lines.find((l) => l.msg === 'Unexpected error' && l.req?.id === 'failure-42');
    expect(failure?.req).toMatchObject({ method: 'GET', url: '/rpy/be-subscription/v1/subscriptions/abc' });
    expect(failure?.req.headers.authorization).toBe('[redacted]');
    const line = sandbox.logs.lines.find((l) => l.msg === 'request completed' && l.req?.id === 'failure-42');
    expect(line).toMatchObject({ level: 50, res: { statusCode: 500 } });
    expect(line?.responseTime).toBeGreaterThanOrEqual(0);
  });
});

describe('contract violations', () => {
  it('turn a response that breaks the contract into a 500 in the area shape, logged as a violation', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/payment-links/business-configurations').set(bearer(token));
    expectError(res, 500, { error_code: 'internal_error', message: 'Internal server error', status_code: 500 });
    const logged = sandbox.logs.lines.find((l) => l.contractViolation?.operation === 'GET /dpy/payment-link/v1/payment-links/business-configurations');
    expect(logged?.msg).toMatch(/breaks the contract/);
    expect(logged?.contractViolation.status).toBe(200);
    expect(JSON.stringify(logged?.contractViolation.violations)).toContain('currency');
  });

  it('are answered and logged by the app that met them, when a second app of the process shares the validator', async () => {
    const second = await startTestServer({ config: { apiSpec: sandbox.config.apiSpec }, extraAreas: [testAreas] });
    try {
      const secondToken = (await second.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
      const before = sandbox.logs.lines.length;
      const res = await second.http.get('/dpy/payment-link/v1/payment-links/business-configurations').set(bearer(secondToken));
      expectError(res, 500, { error_code: 'internal_error', message: 'Internal server error', status_code: 500 });
      expect(second.logs.lines.some((l) => l.contractViolation?.status === 200)).toBe(true);
      expect(sandbox.logs.lines.slice(before).some((l) => l.contractViolation)).toBe(false);
      // An error body that breaks the contract is answered by the second app's own handler too.
      expectError(await second.http.patch('/dpm/webhooks/v1/subscriptions/payment/events/e1').send({}), 500, {
        message: 'Internal server error',
        name: 'dpm-webhooks',
        status_code: 500,
      });
      expect(second.logs.lines.some((l) => l.contractViolation?.status === 409)).toBe(true);
    } finally {
      await second.close();
    }
    // One validator per bundle and setting in a process (building one costs ~0.5 s of CPU).
    const options = { file: sandbox.config.apiSpec, apiSpec: {} as never, validation: true, undocumented: [], upload: { field: 'image', maxFileBytes: 1 } };
    expect(contractValidator(options)).toBe(contractValidator({ ...options }));
    expect(contractValidator(options)).not.toBe(contractValidator({ ...options, validation: false }));
  });

  it('turn an error body the operation does not document into a 500 as well', async () => {
    const res = await sandbox.http.patch('/dpm/webhooks/v1/subscriptions/payment/events/e1').send({});
    expectError(res, 500, { message: 'Internal server error', name: 'dpm-webhooks', status_code: 500 });
    expect(sandbox.logs.lines.some((l) => l.contractViolation?.status === 409)).toBe(true);
  });
});

describe('routes outside the contract', () => {
  it.each([
    ['/', { error_code: 'not_found', message: 'Not found', status_code: 404 }],
    ['/nowhere/at/all', { error_code: 'not_found', message: 'Not found', status_code: 404 }],
    ['/dpy/payment-link/v1/unknown', { error_code: 'not_found', message: 'Not found', status_code: 404 }],
    ['/dpy/web-checkout/v1/unknown', { code: 'not_found', message: 'Not found', details: [] }],
    ['/rpy/be-subscription/v1/unknown', { message: 'Not found', name: 'be-subscription', status_code: 404 }],
    ['/authentication/oauth2/-core/unknown', { error_code: 'not_found', message: 'Not found', status_code: 404 }],
  ])('answers %s with a JSON 404 in its area shape, never HTML', async (path, body) => {
    expectError(await sandbox.http.get(path), 404, body);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await sandbox.http.delete('/authentication/oauth2/access_token');
    expectError(res, 405, { error: 'invalid_request', error_description: 'Method not allowed' });
    expect(res.headers.allow).toBe('POST');
  });

  it('answers HEAD as the GET it stands for: the same status and headers, no body; its security and checks as GET', async () => {
    const headOf = async (path: string, headers: Record<string, string> = {}) => {
      const [get, head] = await Promise.all(['GET', 'HEAD'].map((method) => fetch(`${sandbox.url}${path}`, { method, headers })));
      const headBody = await head!.text();
      const same = (name: string) => [head!.headers.get(name), get!.headers.get(name)];
      await get!.arrayBuffer();
      return { status: [head!.status, get!.status], type: same('content-type'), length: same('content-length'), allow: same('allow'), headBody };
    };
    const sellerBytes = String(Buffer.byteLength(JSON.stringify((await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(token))).body)));
    expect(await headOf('/dpy/payment-link/v1/sellers', bearer(token))).toEqual({
      status: [200, 200], type: ['application/json; charset=utf-8', 'application/json; charset=utf-8'], length: [sellerBytes, sellerBytes], allow: [null, null], headBody: '',
    });
    // Without its token, a 401 as for GET; another spelling of the path, 404; a method the path has not, 405.
    expect(await headOf('/dpy/payment-link/v1/sellers')).toMatchObject({ status: [401, 401], headBody: '' });
    expect(await headOf('/dpy/payment-link/v1/sellers/', bearer(token))).toMatchObject({ status: [404, 404], headBody: '' });
    expect(await headOf('/authentication/oauth2/access_token')).toMatchObject({ status: [405, 405], allow: ['POST', 'POST'], headBody: '' });
    expect(await headOf('/sandbox/v1/jwks')).toMatchObject({ status: [200, 200], headBody: '' });
    // A 405 of a path that has a GET names HEAD too (RFC 9110 §10.2.1: the methods the path takes).
    const wrongMethod = await sandbox.http.delete('/dpy/payment-link/v1/sellers').set(bearer(token));
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
  });

  it('answers a documented operation no router implements with 501', async () => {
    const res = await sandbox.http.get('/dpy/payment-link/v1/not-implemented').set(bearer(token));
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ error_code: 'not_implemented', status_code: 501 });
  });

  it('does not read a JSON body on an operation that takes none (the token endpoints take a form): 400 in its shape', async () => {
    // Malformed, and nested 100 000 deep: neither is parsed, the media type is refused as it is.
    for (const body of ['{"grant_type":', '['.repeat(100_000) + ']'.repeat(100_000)]) {
      const res = await sandbox.http.post('/authentication/oauth2/-core/access_token').set('Content-Type', 'application/json').send(body);
      const message = 'The request body must be application/x-www-form-urlencoded';
      expectError(res, 400, { error_code: 'invalid_request', message, status_code: 400 });
    }
  });

});

describe('request ids and logs', () => {
  it('echoes the caller x-request-id and generates one otherwise', async () => {
    const given = await sandbox.http.get('/sandbox/v1/jwks').set('x-request-id', 'checkout-42.retry-1');
    expect(given.headers['x-request-id']).toBe('checkout-42.retry-1');
    const generated = await sandbox.http.get('/sandbox/v1/jwks');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await sandbox.http.get('/sandbox/v1/jwks').set('x-request-id', 'a b\tc');
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(sandbox.logs.lines.some((l) => l.req?.id === 'checkout-42.retry-1')).toBe(true);
  });

  it('never logs the Authorization header', async () => {
    await sandbox.http.get('/dpy/payment-link/v1/sellers').set(bearer(token)).set('x-request-id', 'redaction-check');
    const line = sandbox.logs.lines.find((l) => l.req?.id === 'redaction-check');
    expect(line?.req.headers.authorization).toBe('[redacted]');
    expect(sandbox.logs.text).not.toContain(token);
  });

  it('logs one line per request at info for 2xx and warn for 4xx, with its status and time', async () => {
    await sandbox.http.get('/sandbox/v1/jwks').set('x-request-id', 'level-200');
    await sandbox.http.get('/dpy/payment-link/v1/sellers').set('x-request-id', 'level-401');
    const lines = (id: string) => sandbox.logs.lines.filter((l) => l.req?.id === id && l.msg === 'request completed');
    expect(lines('level-200')).toEqual([expect.objectContaining({ level: 30, res: expect.objectContaining({ statusCode: 200 }) })]);
    expect(lines('level-401')).toEqual([expect.objectContaining({ level: 40, res: expect.objectContaining({ statusCode: 401 }) })]);
  });

  it('writes nothing for a successful request when the level is warn, and logs an aborted request at warn', async () => {
    const quiet = await startTestServer({ config: { logLevel: 'warn' } });
    try {
      await quiet.http.get('/sandbox/v1/jwks').set('x-request-id', 'quiet-200');
      await quiet.http.get('/dpy/payment-link/v1/sellers').set('x-request-id', 'quiet-401');
      expect(quiet.logs.lines.filter((l) => l.req?.id === 'quiet-200')).toEqual([]);
      expect(quiet.logs.lines.filter((l) => l.req?.id === 'quiet-401').map((l) => l.level)).toEqual([40]);
      // A client that sends half a body and goes away: the request never completes.
      const { request } = await import('node:http');
      const url = new URL(quiet.url);
      await new Promise<void>((resolve) => {
        const req = request({ host: url.hostname, port: url.port, method: 'POST', path: '/authentication/oauth2/-core/access_token', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000', 'x-request-id': 'quiet-aborted' } });
        req.on('error', () => resolve());
        req.write('grant_type=client_cre');
        setTimeout(() => { req.destroy(); resolve(); }, 100);
      });
      await expect.poll(() => quiet.logs.lines.find((l) => l.req?.id === 'quiet-aborted')).toMatchObject({ level: 40, msg: 'request aborted' });
    } finally {
      await quiet.close();
    }
  });

  it('redacts card numbers and security codes at any depth', () => {
    const logs = new CapturedLogs();
    createLogger('info', logs).info({
      body: { subscription: { payment_type: { credit: { card: { number: '4111111111111111', security_code: '123', bin: '411111' } } } } },
    });
    expect(logs.text).not.toContain('4111111111111111');
    expect(logs.text).not.toContain('"123"');
    expect(logs.text).toContain('411111');
  });
});
