// POST /sandbox/v1/signing-keys/rotate: new tokens carry the new kid, tokens of the retired key keep
// working until they expire, the key set publishes both meanwhile, the retired private half is gone;
// another instance on the same store follows; and an `iat` in the future is refused with the usual 401.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { accessTokens } from '../../server/authentication/access-tokens.ts';
import { RETIRED_KEY_PUBLISHED_MS } from '../../server/authentication/index.ts';
import { loadSigningKeys, signingKeyRing } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { createLogger } from '../../server/http/logging.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { ADMIN, DEMO, GATEWAY_SCOPE, ISSUER, startTestServer, tokenForm, type TestServer } from './support/server.ts';
import type { Store } from '../../server/store/store.ts';
import { STORE_KINDS } from './support/stores.ts';

const ROTATE = '/sandbox/v1/signing-keys/rotate';
const PROTECTED = '/dpy/payment-link/v1/sellers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
});
afterAll(() => server.close());

const newToken = async () => (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token as string;
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const jwks = async () => (await server.http.get('/sandbox/v1/jwks')).body as { keys: Array<{ kid: string; d?: string }> };
const call = (token: string) => server.http.get(PROTECTED).set('Authorization', `Bearer ${token}`);

describe('rotating the signing key', () => {
  it('is refused without the sandbox admin token, changing nothing', async () => {
    const before = await jwks();
    const res = await server.http.post(ROTATE);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error_code: 'unauthorized', message: 'Missing or wrong sandbox administration token', status_code: 401 });
    expect(await jwks()).toEqual(before);
  });

  it('signs new tokens with the new key, keeps old tokens valid, and publishes both keys', async () => {
    const oldToken = await newToken();
    const oldKid = kidOf(oldToken);
    const started = Date.now();
    const res = await server.http.post(ROTATE).set('Authorization', ADMIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kid: expect.any(String), previous_kid: oldKid, previous_key_published_until: expect.any(String) });
    const newKid = res.body.kid;
    expect(newKid).not.toBe(oldKid);
    const until = Date.parse(res.body.previous_key_published_until);
    expect(until - started).toBeGreaterThanOrEqual(RETIRED_KEY_PUBLISHED_MS - 1000);
    expect(until - Date.now()).toBeLessThanOrEqual(RETIRED_KEY_PUBLISHED_MS);
    expect(RETIRED_KEY_PUBLISHED_MS).toBeGreaterThan(3599 * 1000);

    const newer = await newToken();
    expect(kidOf(newer)).toBe(newKid);
    const set = await jwks();
    expect(set.keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    expect(set.keys.every((k) => k.d === undefined)).toBe(true);
    for (const token of [oldToken, newer]) {
      expect((await jwtVerify(token, createLocalJWKSet(set as never), { issuer: ISSUER })).payload['x-seller-id']).toBe(DEMO_SELLER_ID);
      const res = await call(token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ seller_id: DEMO_SELLER_ID });
    }

    // In the store: the retired key keeps its public half only, with the instant it was retired.
    const rows = await server.store.query<{ kid: string; active: boolean; sealed_private_jwk: string | null; retired_at: Date | null }>(
      'SELECT kid, active, sealed_private_jwk, retired_at FROM signing_keys ORDER BY created_at',
    );
    expect(rows.rows).toEqual([
      { kid: oldKid, active: false, sealed_private_jwk: null, retired_at: expect.any(Date) },
      { kid: newKid, active: true, sealed_private_jwk: expect.stringMatching(/^v1\./), retired_at: null },
    ]);
  });

  it('publishes a retired key only while its tokens may live, then forgets it', async () => {
    // 1 s: the rotation and the read after it must fit in it, on a loaded machine too.
    const ring = await signingKeyRing(server.store, { retiredKeyPublishedMs: 1_000 });
    const before = (await ring.current()).kid;
    const rotation = await ring.rotate();
    expect(rotation.previousKid).toBe(before);
    expect((await ring.current()).jwks.keys.map((k) => k.kid)).toContain(before);
    await new Promise((r) => setTimeout(r, 1_050));
    const later = await loadSigningKeys(authenticationRepository(server.store), { retiredKeyPublishedMs: 1_000 });
    expect(later.jwks.keys.map((k) => k.kid)).toEqual([rotation.kid]);
    // The next rotation deletes what is no longer published.
    await ring.rotate();
    expect((await server.store.query('SELECT 1 FROM signing_keys WHERE kid = $1', [before])).rowCount).toBe(0);
  });

  it('is followed by another instance on the same store: it verifies the new kid, then signs with it', async () => {
    const [a, b] = [await signingKeyRing(server.store, { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS }), await signingKeyRing(server.store, { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS })];
    const [tokensA, tokensB] = [accessTokens(a, ISSUER), accessTokens(b, ISSUER)];
    const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
    const rotation = await a.rotate();
    const { accessToken } = await tokensA.issue(seller);
    expect(kidOf(accessToken)).toBe(rotation.kid);
    await new Promise((r) => setTimeout(r, 1100)); // an unknown kid reads the keys again, at most once a second
    expect(await tokensB.verify(accessToken)).toEqual({ ...seller, scope: GATEWAY_SCOPE });
    expect((await b.current()).kid).toBe(rotation.kid);
  });
});

describe('revoking a key that may have leaked', () => {
  it('refuses every token the previous key signed at once, a verified one included, and no longer publishes it', async () => {
    // A plain rotation first: the server's own ring signs with the active key of the store (an
    // earlier test rotated with a ring of its own, which the server sees only within 30 s).
    expect((await server.http.post(ROTATE).set('Authorization', ADMIN)).status).toBe(200);
    const leaked = await loadSigningKeys(authenticationRepository(server.store)); // the active key, private half included
    const issued = await newToken();
    expect(kidOf(issued)).toBe(leaked.kid);
    expect((await call(issued)).status).toBe(200); // verified, and kept as verified
    const forged = await new SignJWT({ 'x-seller-id': DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox', scope: GATEWAY_SCOPE })
      .setProtectedHeader({ alg: 'ES256', kid: leaked.kid, typ: 'JWT' })
      .setSubject('anyone')
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti(crypto.randomUUID())
      .sign(leaked.privateKey);
    const before = Date.now();
    const res = await server.http.post(`${ROTATE}?revoke=true`).set('Authorization', ADMIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kid: expect.any(String), previous_kid: leaked.kid, previous_key_published_until: expect.any(String) });
    const until = Date.parse(res.body.previous_key_published_until);
    expect(until).toBeGreaterThanOrEqual(before - 1000);
    expect(until).toBeLessThanOrEqual(Date.now());
    const published = (await jwks()).keys.map((k) => k.kid);
    expect(published).toContain(res.body.kid);
    expect(published).not.toContain(leaked.kid);
    for (const token of [issued, forged]) {
      const refused = await call(token);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error_code: 'unauthorized', message: 'The access token is not valid', status_code: 401 });
    }
    const rows = await server.store.query('SELECT 1 FROM signing_keys WHERE kid = $1', [leaked.kid]);
    expect(rows.rowCount).toBe(0);
    const fresh = await newToken();
    expect(kidOf(fresh)).toBe(res.body.kid);
    expect((await call(fresh)).status).toBe(200);
  });

  it('revokes a key retired by an earlier rotation too: only the new key verifies', async () => {
    expect((await server.http.post(ROTATE).set('Authorization', ADMIN)).status).toBe(200);
    const older = await newToken();
    expect((await server.http.post(ROTATE).set('Authorization', ADMIN)).status).toBe(200); // older's key retired, still published
    const recent = await newToken();
    expect((await call(older)).status).toBe(200);
    const res = await server.http.post(`${ROTATE}?revoke=true`).set('Authorization', ADMIN);
    expect(res.status).toBe(200);
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([res.body.kid]);
    for (const token of [older, recent]) expect((await call(token)).status).toBe(401);
    expect((await call(await newToken())).status).toBe(200);
  });

  it('is refused when revoke is not a boolean', async () => {
    const before = await jwks();
    const res = await server.http.post(`${ROTATE}?revoke=maybe`).set('Authorization', ADMIN);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
    expect(await jwks()).toEqual(before);
  });

  it('without its announcement (a listening connection down), is seen by another instance when it reads the keys again (within 30 s), its verified tokens included', async () => {
    const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
    const deaf: Store = { ...server.store, onAnnounced: undefined };
    const [a, b] = [await signingKeyRing(server.store, options), await signingKeyRing(deaf, options)];
    const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
    const tokensOfB = accessTokens(b, ISSUER);
    const { accessToken } = await accessTokens(a, ISSUER).issue(seller);
    expect((await tokensOfB.verify(accessToken)).clientId).toBe('c');
    await a.rotate({ revoke: true });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await tokensOfB.verify(accessToken)).clientId).toBe('c'); // b has not read the keys again yet
      vi.setSystemTime(Date.now() + 31_000);
      await expect(tokensOfB.verify(accessToken)).rejects.toMatchObject({ reason: 'invalid' });
    } finally {
      vi.useRealTimers();
    }
  });
});

/** Until `check` holds, for at most 5 s. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + 5_000; !(await check()); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(STORE_KINDS)('two instances on one $name database', (kind) => {
  it('rotate at once: each rotation happens whole, one key stays active, and each verifies the other\'s tokens', async () => {
    const { store, again, drop } = await kind.fresh();
    try {
      await ensureDemoSeller(store, DEMO, createLogger('silent'));
      const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
      const [a, b] = [await signingKeyRing(store, options), await signingKeyRing(await again(), options)];
      const first = (await a.current()).kid;
      const [ra, rb] = await Promise.all([a.rotate(), b.rotate()]);
      // One rotation retired the first key, the other retired the key the first one made.
      expect([ra.previousKid, rb.previousKid].sort()).toEqual([first, ra.previousKid === first ? ra.kid : rb.kid].sort());
      const rows = await store.query<{ kid: string; active: boolean }>('SELECT kid, active FROM signing_keys ORDER BY created_at');
      expect(rows.rows.filter((r) => r.active)).toHaveLength(1);
      expect(rows.rows.map((r) => r.kid).sort()).toEqual([first, ra.kid, rb.kid].sort());
      const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
      const [fromA, fromB] = [await accessTokens(a, ISSUER).issue(seller), await accessTokens(b, ISSUER).issue(seller)];
      await new Promise((r) => setTimeout(r, 1100));
      expect((await accessTokens(b, ISSUER).verify(fromA.accessToken)).clientId).toBe('c');
      expect((await accessTokens(a, ISSUER).verify(fromB.accessToken)).clientId).toBe('c');
    } finally {
      await drop();
    }
  });
});

describe.each(STORE_KINDS)('a revocation on one of two instances on one $name database', (kind) => {
  it('is announced: the other refuses the revoked key\'s tokens, verified ones included, and signs with the new key at once, not 30 s later', async () => {
    const { store, again, drop } = await kind.fresh();
    try {
      await ensureDemoSeller(store, DEMO, createLogger('silent'));
      const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
      const [a, b] = [await signingKeyRing(store, options), await signingKeyRing(await again(), options)];
      // No wait for b's connection for NOTIFY (on PostgreSQL): a rotation published before it
      // listens is read when it does, since its first LISTEN wakes the keys once.
      const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
      const tokensOfB = accessTokens(b, ISSUER);
      const { accessToken } = await accessTokens(a, ISSUER).issue(seller);
      expect((await tokensOfB.verify(accessToken)).clientId).toBe('c');
      const { kid } = await a.rotate({ revoke: true });
      await until(async () => (await tokensOfB.verify(accessToken).then(() => false, () => true)));
      await expect(tokensOfB.verify(accessToken)).rejects.toMatchObject({ reason: 'invalid' });
      expect((await b.current()).kid).toBe(kid);
      expect(kidOf((await tokensOfB.issue(seller)).accessToken)).toBe(kid);
    } finally {
      await drop();
    }
  });
});

describe('a rotation announced while a read of the keys is in flight', () => {
  it('is read by one more read after it: the one in flight may have queried before the rotation committed', async () => {
    let hold: Promise<void> | undefined;
    // b's reads of the keys answer only once `hold` settles, with what they read before.
    const held: Store = {
      ...server.store,
      query: async (sql, params) => {
        const result = await server.store.query(sql, params);
        if (hold && /signing_keys/.test(sql)) await hold;
        return result;
      },
    } as Store;
    const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
    const [a, b] = [await signingKeyRing(server.store, options), await signingKeyRing(held, options)];
    const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
    const tokensOfB = accessTokens(b, ISSUER);
    const { accessToken } = await accessTokens(a, ISSUER).issue(seller);
    expect((await tokensOfB.verify(accessToken)).clientId).toBe('c');
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    server.store.announce!('signing-keys-rotated'); // b reads, and its read is held with the keys before the rotation
    await new Promise((r) => setTimeout(r, 50));
    await a.rotate({ revoke: true }); // announced while that read is in flight
    hold = undefined;
    release();
    await until(async () => tokensOfB.verify(accessToken).then(() => false, () => true));
  });
});

describe('a rotation whose instance cannot read the keys again after it committed', () => {
  it('is announced all the same: another instance refuses the revoked key at once, and this one reads the keys again a second later, not 30 s', async () => {
    let failing = false;
    // a's reads of the keys fail while `failing` holds: the rotation's transaction commits, its read after it does not.
    const flaky: Store = {
      ...server.store,
      query: async (sql, params) => {
        if (failing && /signing_keys/.test(sql)) throw new Error('the store went away');
        return server.store.query(sql, params);
      },
    } as Store;
    const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
    const [a, b] = [await signingKeyRing(flaky, options), await signingKeyRing(server.store, options)];
    const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
    const { accessToken } = await accessTokens(a, ISSUER).issue(seller);
    expect((await accessTokens(b, ISSUER).verify(accessToken)).clientId).toBe('c');
    failing = true;
    await expect(a.rotate({ revoke: true })).rejects.toThrow('the store went away');
    failing = false;
    await until(async () => accessTokens(b, ISSUER).verify(accessToken).then(() => false, () => true));
    const { kid } = await b.current();
    // a read again a second after its failed reads, not at its refresh 30 s later.
    await expect.poll(async () => (await a.current()).kid, { timeout: 5_000, interval: 100 }).toBe(kid);
    await expect(accessTokens(a, ISSUER).verify(accessToken)).rejects.toMatchObject({ reason: 'invalid' });
  });
});

describe('a rotation announced while a new instance reads its keys for the first time', () => {
  it('is read once more before the instance serves: its first read may have queried before the rotation committed', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    let queried!: () => void;
    const firstQuery = new Promise<void>((resolve) => (queried = resolve));
    // b's first read of the keys answers only once `hold` settles, with what it read before.
    let reads = 0;
    const held: Store = {
      ...server.store,
      query: async (sql, params) => {
        const result = await server.store.query(sql, params);
        if (/signing_keys/.test(sql) && reads++ === 0) {
          queried();
          await hold;
        }
        return result;
      },
    } as Store;
    const options = { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS };
    const a = await signingKeyRing(server.store, options);
    const seller = { clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' };
    const { accessToken } = await accessTokens(a, ISSUER).issue(seller);
    const starting = signingKeyRing(held, options);
    await firstQuery; // b has read the keys before the rotation
    const { kid } = await a.rotate({ revoke: true }); // announced while that first read is in flight
    release();
    const b = await starting;
    expect((await b.current()).kid).toBe(kid);
    await expect(accessTokens(b, ISSUER).verify(accessToken)).rejects.toMatchObject({ reason: 'invalid' });
    expect(reads).toBeGreaterThanOrEqual(2);
  });
});

describe('a token issued in the future', () => {
  it('is refused with the usual 401 beyond 60 s of skew, and accepted within', async () => {
    const keys = await loadSigningKeys(authenticationRepository(server.store));
    const now = Math.floor(Date.now() / 1000);
    const sign = (iat: number) =>
      new SignJWT({ 'x-seller-id': DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox', scope: GATEWAY_SCOPE })
        .setProtectedHeader({ alg: 'ES256', kid: keys.kid, typ: 'JWT' })
        .setSubject('demo-seller-client')
        .setIssuer(ISSUER)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3599)
        .setJti(crypto.randomUUID())
        .sign(keys.privateKey);
    const future = await call(await sign(now + 600));
    expect(future.status).toBe(401);
    expect(future.body).toEqual({ error_code: 'unauthorized', message: 'The access token is not valid', status_code: 401 });
    expect((await call(await sign(now + 30))).status).toBe(200);
  });
});

describe('keys that cannot be read again', () => {
  it('keep the keys read last, say so once per outage and when they are read again, and are tried again a second later, not at every call', async () => {
    const errors: Error[] = [];
    let reads = 0; // statements on signing_keys
    const counted: Store = { ...server.store, query: (sql, params) => ((reads += /signing_keys/.test(sql) ? 1 : 0), server.store.query(sql, params)) };
    let readAgain = 0;
    const ring = await signingKeyRing(counted, { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS }, (error) => errors.push(error), () => readAgain++);
    const before = await ring.current();
    const { rows } = await server.store.query<{ kid: string; sealed: string }>('SELECT kid, sealed_private_jwk AS sealed FROM signing_keys WHERE active');
    const [{ kid, sealed }] = rows as [{ kid: string; sealed: string }];
    // Another instance's key, sealed with a key this one does not have.
    await server.store.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA']);
    // The ring's clock (Date) moved on instead of waiting: its reads go to the store as they would.
    vi.useFakeTimers({ toFake: ['Date'] });
    const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
    try {
      later(1_100); // an unknown kid is looked for at most once a second
      expect((await ring.forKid('unknown-kid')).kid).toBe(before.kid);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.message).toMatch(/^The stored token signing key cannot be decrypted/);
      // Within the second: the keys read last, no read.
      const readsAfterFailure = reads;
      expect((await ring.forKid('unknown-kid')).kid).toBe(before.kid);
      expect(await ring.current()).toBe(await ring.current());
      expect(reads).toBe(readsAfterFailure);
      later(1_100);
      expect((await ring.forKid('unknown-kid')).kid).toBe(before.kid); // read again, failed again: not said again
      expect(errors).toHaveLength(1);
      await server.store.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, sealed]);
      later(1_100);
      expect(readAgain).toBe(0);
      await ring.forKid('unknown-kid'); // works again, and says so once
      expect(readAgain).toBe(1);
      await server.store.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA']);
      later(1_100);
      await ring.forKid('unknown-kid');
      expect(errors).toHaveLength(2); // a new outage is said again
    } finally {
      vi.useRealTimers();
      await server.store.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, sealed]);
    }
  });
});
