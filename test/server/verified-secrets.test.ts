// The cache of successful client secret verifications: scrypt once per (stored hash, secret), and
// never for failures; then the same through the token endpoints, counting the scrypt calls.
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { hashClientSecret, verifyClientSecret } from '../../server/authentication/secrets.ts';
import { verifiedSecrets } from '../../server/authentication/verified-secrets.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { basic, GATEWAY_SCOPE, ISSUER, startTestServer, tokenForm, type TestServer } from './support/server.ts';

// Every scrypt verification, wherever it comes from (the service, the cache, the unknown-client path).
vi.mock('../../server/authentication/secrets.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/authentication/secrets.ts')>();
  return { ...actual, verifyClientSecret: vi.fn(actual.verifyClientSecret) };
});
const scryptCalls = vi.mocked(verifyClientSecret);
/** A scrypt verifier of its own, counting only the calls of one cache. */
const countingScrypt = () => vi.fn((secret: string, stored: string) => verifyClientSecret(secret, stored));

describe('verifiedSecrets', () => {
  let stored: string;
  beforeAll(async () => {
    stored = await hashClientSecret('right-secret');
  });

  it('runs scrypt only for the first correct call of a stored hash', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    expect(scrypt).toHaveBeenCalledTimes(1);
    expect(secrets.size).toBe(1);
  });

  it('runs one scrypt for a burst of simultaneous first calls with the same secret, and one per distinct secret', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    const answers = await Promise.all([
      ...Array.from({ length: 16 }, () => secrets.verify('right-secret', stored)),
      ...Array.from({ length: 4 }, () => secrets.verify('wrong-secret', stored)),
    ]);
    expect(answers).toEqual([...Array(16).fill(true), ...Array(4).fill(false)]);
    expect(scrypt).toHaveBeenCalledTimes(2);
    // Nothing is left in flight: a wrong secret later runs scrypt again, the right one does not.
    expect(await secrets.verify('wrong-secret', stored)).toBe(false);
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    expect(scrypt).toHaveBeenCalledTimes(3);
  });

  it('shares a check under way only between calls of the same client id (unknown ids share one stored hash)', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    const answers = await Promise.all([
      secrets.verify('guess', stored, { clientId: 'unknown-1' }),
      secrets.verify('guess', stored, { clientId: 'unknown-2' }),
      secrets.verify('guess', stored, { clientId: 'unknown-2' }),
    ]);
    expect(answers).toEqual([false, false, false]);
    expect(scrypt).toHaveBeenCalledTimes(2);
  });

  it('still runs scrypt for a wrong secret after a cached success, and refuses it', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    await secrets.verify('right-secret', stored);
    expect(await secrets.verify('wrong-secret', stored)).toBe(false);
    expect(await secrets.verify('wrong-secret', stored)).toBe(false);
    expect(scrypt).toHaveBeenCalledTimes(3);
    // The wrong guesses did not evict the entry: the right secret is still answered from memory.
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    expect(scrypt).toHaveBeenCalledTimes(3);
  });

  it('never remembers a failure', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    expect(await secrets.verify('wrong-secret', stored)).toBe(false);
    expect(await secrets.verify('wrong-secret', stored)).toBe(false);
    expect(await secrets.verify('right-secret', 'not a PHC string')).toBe(false);
    expect(scrypt).toHaveBeenCalledTimes(3);
    expect(secrets.size).toBe(0);
  });

  it('refuses the old secret and accepts the new one once the stored hash changes', async () => {
    const scrypt = countingScrypt();
    const secrets = verifiedSecrets({ verify: scrypt });
    expect(await secrets.verify('right-secret', stored)).toBe(true);
    const rotated = await hashClientSecret('new-secret');
    expect(await secrets.verify('right-secret', rotated)).toBe(false);
    expect(await secrets.verify('new-secret', rotated)).toBe(true);
    expect(await secrets.verify('new-secret', rotated)).toBe(true);
    expect(scrypt).toHaveBeenCalledTimes(3);
  });

  it('keeps at most maxEntries, evicting the least recently used first', async () => {
    // A fast stand-in verifier: the "stored hash" of secret s is `hash-of-s`.
    const verify = vi.fn(async (secret: string, hash: string) => hash === `hash-of-${secret}`);
    const secrets = verifiedSecrets({ verify, maxEntries: 3 });
    for (const s of ['a', 'b', 'c']) await secrets.verify(s, `hash-of-${s}`);
    await secrets.verify('a', 'hash-of-a'); // a is now the most recently used
    await secrets.verify('d', 'hash-of-d'); // evicts b, the least recently used
    expect(secrets.size).toBe(3);
    expect(secrets.entries().map(([hash]) => hash)).toEqual(['hash-of-c', 'hash-of-a', 'hash-of-d']);
    for (let i = 0; i < 100; i++) await secrets.verify(`s${i}`, `hash-of-s${i}`);
    expect(secrets.size).toBe(3);

    verify.mockClear();
    await secrets.verify('b', 'hash-of-b'); // evicted: verified again
    await secrets.verify('s99', 'hash-of-s99'); // kept: from memory
    expect(verify.mock.calls).toEqual([['b', 'hash-of-b']]);
  });

  it('holds 32-byte keyed HMACs, never the secret', async () => {
    const secret = 'x'.repeat(32); // as long as an HMAC, so only the content can tell them apart
    const hash = await hashClientSecret(secret);
    const secrets = verifiedSecrets();
    const other = verifiedSecrets();
    await secrets.verify(secret, hash);
    await other.verify(secret, hash);
    const [[key, mac]] = secrets.entries() as [[string, Buffer]];
    expect(key).toBe(hash);
    expect(mac).toBeInstanceOf(Buffer);
    expect(mac).toHaveLength(32);
    expect(mac.equals(Buffer.from(secret))).toBe(false);
    expect(mac.toString('latin1')).not.toContain(secret);
    // Keyed per instance (per process): the same secret gives another value elsewhere.
    expect(mac.equals(other.entries()[0]![1])).toBe(false);
  });
});

describe('the token endpoints', () => {
  const FIRST_FORM = '/authentication/oauth2/-core/access_token';
  const SECOND_FORM = '/authentication/oauth2/access_token';
  let sandbox: TestServer;
  beforeAll(async () => {
    sandbox = await startTestServer();
  });
  afterAll(() => sandbox.close());
  beforeEach(() => scryptCalls.mockClear());

  /** A client of the demo seller nobody has used yet in this process. */
  async function newClient(clientId: string, clientSecret: string) {
    const secretHash = await hashClientSecret(clientSecret);
    await authenticationRepository(sandbox.store).insertApiClient({ clientId, sellerId: DEMO_SELLER_ID, secretHash });
    return { client_id: clientId, client_secret: clientSecret };
  }
  const firstForm = (form: Record<string, string>) => sandbox.http.post(FIRST_FORM).type('form').send(tokenForm(form));
  const verifyToken = async (token: string) => {
    const jwks = createLocalJWKSet((await sandbox.http.get('/sandbox/v1/jwks')).body);
    return (await jwtVerify(token, jwks, { algorithms: ['ES256'], issuer: ISSUER })).payload;
  };

  it('answers two correct calls with valid tokens, running scrypt once', async () => {
    const credentials = await newClient('cache-client-1', 'cache-secret-1');
    for (const res of [await firstForm(credentials), await firstForm(credentials)]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3599, scope: GATEWAY_SCOPE });
      expect(await verifyToken(res.body.access_token)).toMatchObject({ sub: 'cache-client-1', 'x-seller-id': DEMO_SELLER_ID });
    }
    // The second form shares the cache: no scrypt either.
    const res = await sandbox.http.post(SECOND_FORM).type('form').set('Authorization', basic('cache-client-1', 'cache-secret-1')).send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect(scryptCalls).toHaveBeenCalledTimes(1);
  });

  it('runs scrypt for a wrong secret after a cached success, and answers the 401 bodies as before', async () => {
    const credentials = await newClient('cache-client-2', 'cache-secret-2');
    expect((await firstForm(credentials)).status).toBe(200);
    scryptCalls.mockClear();

    const first = await firstForm({ ...credentials, client_secret: 'wrong' });
    expect(first.status).toBe(401);
    expect(first.body).toEqual({ error_code: 'invalid_credentials', message: 'Invalid client credentials', status_code: 401 });
    const second = await sandbox.http.post(SECOND_FORM).type('form').set('Authorization', basic('cache-client-2', 'wrong')).send({ grant_type: 'client_credentials' });
    expect(second.status).toBe(401);
    expect(second.body).toEqual({ error: 'invalid_client', error_description: 'Invalid client credentials' });
    expect(scryptCalls).toHaveBeenCalledTimes(2);
  });

  it('runs scrypt for every call of an unknown client id', async () => {
    for (let i = 0; i < 2; i++) expect((await firstForm({ client_id: 'nobody', client_secret: 'whatever' })).status).toBe(401);
    expect(scryptCalls).toHaveBeenCalledTimes(2);
  });

  it('runs a scrypt of its own for each unknown client id, even when another is checked at once with the same secret', async () => {
    // A call for an unknown id used to join another unknown id's check under way (one dummy hash for
    // all) and end with it, while a known id waited for its own scrypt: timing told which ids exist.
    const answers = await Promise.all(['nobody-1', 'nobody-2', 'nobody-3'].map((client_id) => firstForm({ client_id, client_secret: 'same-guess' })));
    expect(answers.map((res) => [res.status, res.body.error_code])).toEqual(Array(3).fill([401, 'invalid_credentials']));
    expect(scryptCalls).toHaveBeenCalledTimes(3);
  });

  it('refuses the old secret and accepts the new one after the stored secret changes', async () => {
    const credentials = await newClient('cache-client-3', 'old-secret');
    expect((await firstForm(credentials)).status).toBe(200);
    await sandbox.store.query('UPDATE api_clients SET secret_hash = $1 WHERE client_id = $2', [await hashClientSecret('new-secret'), 'cache-client-3']);

    const old = await firstForm(credentials);
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error_code: 'invalid_credentials', message: 'Invalid client credentials', status_code: 401 });
    const renewed = await firstForm({ ...credentials, client_secret: 'new-secret' });
    expect(renewed.status).toBe(200);
    expect(await verifyToken(renewed.body.access_token)).toMatchObject({ sub: 'cache-client-3' });
  });
});
