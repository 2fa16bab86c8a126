// The two token endpoint forms, exactly as the authentication area of the contract decides them.
import { gzipSync } from 'node:zlib';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { migrate } from '../../server/store/migrate.ts';
import type { Store } from '../../server/store/store.ts';
import { DATABASE_URL, freshPostgresSchema, openTestStore } from './support/stores.ts';
import { unendedRequest } from '../support/unended-request.ts';
import { slowTokenRequestTo } from './support/slow-request.ts';
import { ADMIN, basic, DEMO, expectNoStackTrace, GATEWAY_SCOPE, ISSUER, startTestServer, tokenForm, type TestServer } from './support/server.ts';

const FIRST_FORM = '/authentication/oauth2/-core/access_token';
const TOO_LARGE = { error_code: 'payload_too_large', message: 'Request body too large', status_code: 413 };
const SECOND_FORM = '/authentication/oauth2/access_token';

let sandbox: TestServer;
beforeAll(async () => {
  sandbox = await startTestServer();
});
afterAll(() => sandbox.close());

const firstForm = (form: Record<string, string>) => sandbox.http.post(FIRST_FORM).type('form').send(form);
const secondForm = (authorization: string | undefined, form: Record<string, string> = { grant_type: 'client_credentials' }) => {
  const req = sandbox.http.post(SECOND_FORM).type('form');
  return (authorization ? req.set('Authorization', authorization) : req).send(form);
};

describe('first form: credentials and scope in the form body', () => {
  it('issues a token for the documented scope spelling', async () => {
    const res = await firstForm(tokenForm());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3599, scope: GATEWAY_SCOPE });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('accepts the sample spelling digital-platform:gateway-api and grants the documented one', async () => {
    const res = await firstForm(tokenForm({ scope: 'digital-platform:gateway-api' }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe(GATEWAY_SCOPE);
  });

  it.each([
    ['scope', 'scope is required'],
    ['client_id', 'client_id is required'],
    ['client_secret', 'client_secret is required'],
    ['grant_type', 'grant_type is required'],
  ])('answers 400 invalid_request when %s is missing', async (field, message) => {
    const res = await firstForm(tokenForm({ [field]: undefined }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error_code: 'invalid_request', message, status_code: 400 });
  });

  it('answers 400 unsupported_grant_type for another grant type', async () => {
    const res = await firstForm(tokenForm({ grant_type: 'password' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error_code: 'unsupported_grant_type', message: 'grant_type must be client_credentials', status_code: 400 });
  });

  it('answers 400 invalid_scope for an unknown scope, before looking at the credentials', async () => {
    const res = await firstForm(tokenForm({ scope: 'digital-plataform:admin', client_secret: 'wrong' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error_code: 'invalid_scope', message: `scope must be ${GATEWAY_SCOPE}`, status_code: 400 });
  });

  it.each([
    ['a wrong secret', { client_secret: 'not-the-secret' }],
    ['an unknown client id', { client_id: 'nobody' }],
  ])('answers 401 invalid_credentials for %s', async (_case, overrides) => {
    const res = await firstForm(tokenForm(overrides));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error_code: 'invalid_credentials', message: 'Invalid client credentials', status_code: 401 });
  });

  it('answers a form over 16 KiB with 413 payload_too_large (a token form is a few hundred bytes)', async () => {
    for (const bytes of [17 * 1024, 2 * 1024 * 1024]) {
      const res = await firstForm(tokenForm({ client_secret: 'x'.repeat(bytes) }));
      expect(res.status, String(bytes)).toBe(413);
      expect(res.body).toEqual(TOO_LARGE);
    }
    expect((await firstForm(tokenForm({ client_id: 'x'.repeat(15 * 1024) }))).status).toBe(400); // read: an unknown shape of client id
  });

  it('refuses a compressed form unread (400), whatever it inflates to: 1 KB of gzip was 1 MiB of + to decode', async () => {
    const bomb = gzipSync(`x=${'+'.repeat(1024 * 1024)}`);
    expect(bomb.length).toBeLessThan(2048);
    const message = 'The request body must not be compressed (a Content-Encoding other than identity is not read)';
    for (const encoding of ['gzip', 'deflate', 'br', 'GZIP', 'gzip, identity']) {
      const res = await fetch(`${sandbox.url}${FIRST_FORM}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': encoding }, body: new Uint8Array(bomb) });
      expect([res.status, await res.json()], encoding).toEqual([400, { error_code: 'invalid_request', message, status_code: 400 }]);
    }
    // identity is no compression: read as any form.
    const plain = await fetch(`${sandbox.url}${FIRST_FORM}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'identity' }, body: new URLSearchParams(tokenForm()) });
    expect(plain.status).toBe(200);
  });

  it('answers a body that says it is over the limit with 413 before reading it, and closes the connection', async () => {
    // 10 GB announced, a few bytes sent: the answer comes at once, not after the body (or the request timeout).
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '10000000000' };
    const answer = await unendedRequest(`${sandbox.url}${FIRST_FORM}`, { headers, first: 'grant_type=client_credentials&client_id=' });
    expect(answer).toEqual({ status: 413, body: TOO_LARGE, connection: 'close', closedBySandbox: true });
  });

  it('refuses a body sent chunked, without its length, before reading it (400), and closes the connection', async () => {
    // Its size is unknown until its end, and its framing is not body bytes: a chunk size padded with
    // leading zeros read 11 GB of one request while counting 1 byte a megabyte. This one never ends.
    const message = 'A request body must be sent with its Content-Length (a chunked body is not read)';
    const refused = { status: 400, body: { error_code: 'invalid_request', message, status_code: 400 }, connection: 'close', closedBySandbox: true };
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' };
    const form = new URLSearchParams(tokenForm()).toString();
    expect(await unendedRequest(`${sandbox.url}${FIRST_FORM}`, { headers, first: form })).toEqual(refused);
    // Compressed, it is refused as compressed (below).
    const gzipped = gzipSync(form);
    const compressed = 'The request body must not be compressed (a Content-Encoding other than identity is not read)';
    expect(await unendedRequest(`${sandbox.url}${FIRST_FORM}`, { headers: { ...headers, 'Content-Encoding': 'gzip' }, first: gzipped })).toEqual({
      ...refused,
      body: { error_code: 'invalid_request', message: compressed, status_code: 400 },
    });
    // A form with its length that arrives in parts is read to its end.
    const inParts = await slowTokenRequestTo(sandbox.url, () => undefined, 20);
    expect(inParts.status).toBe(200);
    expect(JSON.parse(inParts.body)).toMatchObject({ token_type: 'Bearer', scope: GATEWAY_SCOPE });
  });

  it.each([
    ['the same client, right credentials', basic(DEMO.clientId, DEMO.clientSecret)],
    ['wrong credentials', basic('evil', 'wrong-secret')],
    ['a lower-case scheme', `basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`],
  ])('answers 400 invalid_request when a Basic header comes too (%s): one authentication method per request', async (_case, authorization) => {
    const res = await sandbox.http.post(FIRST_FORM).type('form').set('Authorization', authorization).send(tokenForm());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error_code: 'invalid_request',
      message: 'Send the client credentials in the form body or in a Basic Authorization header, not in both (RFC 6749, section 2.3)',
      status_code: 400,
    });
    expect(res.body).not.toHaveProperty('access_token');
  });

  // The contract documents no 415 for the token call: a wrong Content-Type is an invalid request (400).
  it('answers a JSON body with 400 in the first form shape, without a stack trace', async () => {
    const res = await sandbox.http.post(FIRST_FORM).send(tokenForm());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error_code: 'invalid_request', message: 'The request body must be application/x-www-form-urlencoded', status_code: 400 });
    expectNoStackTrace(res.body);
  });
});

describe('second form: Basic credentials and only grant_type', () => {
  it('issues a Bearer token with the gateway scope', async () => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3599, scope: GATEWAY_SCOPE });
  });

  it.each([
    ['no Authorization header', undefined, 'Missing or malformed Basic credentials'],
    ['a Bearer header', 'Bearer abc', 'Missing or malformed Basic credentials'],
    ['Basic without a colon', `Basic ${Buffer.from('demo-seller-client').toString('base64')}`, 'Missing or malformed Basic credentials'],
    ['a wrong secret', basic(DEMO.clientId, 'wrong'), 'Invalid client credentials'],
    ['an unknown client', basic('nobody', DEMO.clientSecret), 'Invalid client credentials'],
  ])('answers 401 invalid_client for %s', async (_case, authorization, description) => {
    const res = await secondForm(authorization);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: description });
    expect(res.headers['www-authenticate']).toBe('Basic realm="token"');
  });

  it.each([
    ['a client_secret in the body (the right one)', { client_secret: DEMO.clientSecret }],
    ['a client_secret in the body (a wrong one)', { client_secret: 'anything' }],
    ['another client_id in the body', { client_id: 'another-client' }],
    ['both in the body', { client_id: DEMO.clientId, client_secret: DEMO.clientSecret }],
  ])('answers 400 invalid_request for %s: one authentication method per request', async (_case, extra) => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret), { grant_type: 'client_credentials', ...extra });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'Send the client credentials in the form body or in a Basic Authorization header, not in both (RFC 6749, section 2.3)',
    });
  });

  it('answers 400 invalid_request for a malformed Basic header with credentials in the body too, and 401 without them', async () => {
    const malformed = `Basic ${Buffer.from('no-colon-here').toString('base64')}`;
    const both = await secondForm(malformed, { grant_type: 'client_credentials', client_id: DEMO.clientId, client_secret: DEMO.clientSecret });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('invalid_request');
    const headerOnly = await secondForm(malformed);
    expect(headerOnly.status).toBe(401);
    expect(headerOnly.body).toEqual({ error: 'invalid_client', error_description: 'Missing or malformed Basic credentials' });
  });

  it("accepts a client_id in the body equal to the header's", async () => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret), { grant_type: 'client_credentials', client_id: DEMO.clientId });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  it('answers 400 invalid_request when grant_type is missing', async () => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret), {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'grant_type is required' });
  });

  it('answers a body over the limit with 413 invalid_request', async () => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret), { grant_type: 'client_credentials', padding: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Request body too large' });
  });

  it('answers 400 unsupported_grant_type for another grant type', async () => {
    const res = await secondForm(basic(DEMO.clientId, DEMO.clientSecret), { grant_type: 'authorization_code' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: 'grant_type must be client_credentials' });
  });
});

describe('the access token', () => {
  it('is an ES256 JWT with the kid of the key served at /sandbox/v1/jwks, living 3599 s', async () => {
    const { body } = await firstForm(tokenForm());
    const header = decodeProtectedHeader(body.access_token);
    const jwks = await sandbox.http.get('/sandbox/v1/jwks');
    expect(jwks.status).toBe(200);
    expect(header).toEqual({ alg: 'ES256', kid: jwks.body.keys[0].kid, typ: 'JWT' });
    expect(jwks.body.keys[0]).not.toHaveProperty('d'); // public keys only

    const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks.body), { algorithms: ['ES256'], issuer: ISSUER });
    expect(payload).toEqual({
      sub: DEMO.clientId,
      'x-seller-id': DEMO_SELLER_ID,
      country: 'BR',
      tenant: 'sandbox',
      scope: GATEWAY_SCOPE,
      iss: ISSUER,
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
    });
    expect(payload.exp! - payload.iat!).toBe(3599);
  });

  it('has a new jti each time', async () => {
    const [a, b] = await Promise.all([firstForm(tokenForm()), firstForm(tokenForm())]);
    expect(decodeJwt(a.body.access_token).jti).not.toBe(decodeJwt(b.body.access_token).jti);
  });
});

const costOf = async (store: Store, clientId: string) =>
  /^\$scrypt\$(ln=\d+,r=\d+,p=\d+)\$/.exec((await store.query<{ secret_hash: string }>('SELECT secret_hash FROM api_clients WHERE client_id = $1', [clientId])).rows[0]!.secret_hash)?.[1];

describe('the cost of client secrets\' hashes', () => {
  /** The cost of the demo client's hash on a store kept beyond the process, once the sandbox's start stored it. */
  const demoClientCostOn = async (store: Store) => {
    expect(store.inMemory).toBeUndefined();
    await migrate(store);
    await ensureDemoSeller(store, DEMO, createLogger('silent'));
    return costOf(store, DEMO.clientId);
  };

  it('is a thirty-second of the stored one in memory, where nothing outlives the process: the demo client\'s, a seller\'s made through the admin API, whose token works', async () => {
    expect(sandbox.store.inMemory).toBe(true);
    expect(await costOf(sandbox.store, DEMO.clientId)).toBe('ln=10,r=8,p=1');
    const made = await sandbox.http.post('/sandbox/v1/sellers').set('Authorization', ADMIN).send({ trade_name: 'Custo Baixo', email: 'c@example.com', country: 'BR', currencies: ['BRL'] });
    expect(made.status).toBe(201);
    const { client_id, client_secret } = made.body.credentials as { client_id: string; client_secret: string };
    expect(await costOf(sandbox.store, client_id)).toBe('ln=10,r=8,p=1');
    const token = await firstForm(tokenForm({ client_id, client_secret }));
    expect(token.status).toBe(200);
    expect(decodeJwt(token.body.access_token).sub).toBe(client_id);
    expect((await firstForm(tokenForm({ client_id, client_secret: `${client_secret}x` }))).status).toBe(401);
  });

  it('is the stored one (scrypt ln=15, 32 MiB) on a data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'secret-cost-'));
    const store = await openTestStore({ dataDir: join(dir, 'data') });
    try {
      expect(await demoClientCostOn(store)).toBe('ln=15,r=8,p=1');
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!DATABASE_URL)('is the stored one on PostgreSQL', async () => {
    const store = await (await freshPostgresSchema())();
    try {
      expect(await demoClientCostOn(store)).toBe('ln=15,r=8,p=1');
    } finally {
      await store.close();
    }
  });
});

describe('client secrets', () => {
  it('are stored as salted scrypt hashes, never in plain text', async () => {
    const { rows } = await sandbox.store.query<{ secret_hash: string }>('SELECT secret_hash FROM api_clients WHERE client_id = $1', [DEMO.clientId]);
    expect(rows[0]!.secret_hash).toMatch(/^\$scrypt\$ln=\d+,r=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(rows[0]!.secret_hash).not.toContain(DEMO.clientSecret);
    const all = await sandbox.store.query('SELECT * FROM api_clients');
    expect(JSON.stringify(all.rows)).not.toContain(DEMO.clientSecret);
  });

  it("of the demo client are hashed once per process: a later sandbox stores the same salted hash, another demo secret gets its own", async () => {
    const stored = async (server: TestServer, clientId: string) =>
      (await server.store.query<{ secret_hash: string }>('SELECT secret_hash FROM api_clients WHERE client_id = $1', [clientId])).rows[0]!.secret_hash;
    const again = await startTestServer();
    const other = await startTestServer({ config: { demoClient: { clientId: 'other-demo-client', clientSecret: 'other-demo-secret' } } });
    try {
      expect(await stored(again, DEMO.clientId)).toBe(await stored(sandbox, DEMO.clientId));
      // `$scrypt$<params>$<salt>$<hash>`: another secret is salted anew, not hashed with the first one's salt.
      const salt = (hash: string) => hash.split('$')[3];
      expect(salt(await stored(other, 'other-demo-client'))).not.toBe(salt(await stored(sandbox, DEMO.clientId)));
      const token = await other.http.post(FIRST_FORM).type('form').send(tokenForm({ client_id: 'other-demo-client', client_secret: 'other-demo-secret' }));
      expect(token.status).toBe(200);
      const wrong = await other.http.post(FIRST_FORM).type('form').send(tokenForm({ client_id: 'other-demo-client' }));
      expect(wrong.status).toBe(401);
    } finally {
      await Promise.all([again.close(), other.close()]);
    }
  });

  it('cost the same scrypt time for an unknown client id as for a wrong secret', async () => {
    // At the stored cost (a store kept beyond the process): in memory a hash costs a few milliseconds,
    // too close to the rest of a request for timing to tell the dummy hash apart (token-throttle.test.ts
    // checks there that an unknown client id costs one scrypt of the store's cost).
    const stored = await startTestServer({ store: { ...(await openTestStore({})), inMemory: false } });
    onTestFinished(() => stored.close());
    expect(await costOf(stored.store, DEMO.clientId)).toBe('ln=15,r=8,p=1');
    const once = async (overrides: Record<string, string>) => {
      const started = performance.now();
      expect((await stored.http.post(FIRST_FORM).type('form').send(tokenForm(overrides))).status).toBe(401);
      return performance.now() - started;
    };
    // Interleaved, so that both kinds meet the same load on a shared machine; the fastest of each.
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      wrong.push(await once({ client_secret: 'wrong' }));
      unknown.push(await once({ client_id: 'nobody' }));
    }
    // Both spend one scrypt (tens of milliseconds); without the dummy hash the unknown one is ~1 ms,
    // under a tenth of the other. Load moves either by a factor of two or so, not ten.
    expect(Math.min(...unknown)).toBeGreaterThan(Math.min(...wrong) * 0.3);
  });
});
