// verifyAccessToken: what it accepts, what it refuses, and what it returns.
import { base64url, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { accessTokens, AccessTokenRejected, type AccessTokens } from '../../server/authentication/access-tokens.ts';
import { loadSigningKeys, type SigningKeys } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { isGuid } from '../../server/authentication/bearer.ts';
import { migrate } from '../../server/store/migrate.ts';
import { type Store } from '../../server/store/store.ts';
import { openTestStore } from './support/stores.ts';
import { GATEWAY_SCOPE, ISSUER } from './support/server.ts';

const SELLER = { clientId: 'client-1', sellerId: '0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b', country: 'BR', tenant: 'sandbox' };

let store: Store;
let keys: SigningKeys;
let tokens: AccessTokens;
beforeAll(async () => {
  store = await openTestStore({});
  await migrate(store);
  keys = await loadSigningKeys(authenticationRepository(store));
  tokens = accessTokens(keys, ISSUER);
});
afterAll(() => store.close());
afterEach(() => {
  vi.useRealTimers();
});

const now = () => Math.floor(Date.now() / 1000);
const claims = (overrides: Record<string, unknown> = {}) => ({
  'x-seller-id': SELLER.sellerId,
  country: 'BR',
  tenant: 'sandbox',
  scope: GATEWAY_SCOPE,
  sub: SELLER.clientId,
  iss: ISSUER,
  iat: now(),
  exp: now() + 3599,
  jti: 'f0e1d2c3-b4a5-4678-9abc-def012345678',
  ...overrides,
});
const sign = (payload: Record<string, unknown>, key: CryptoKey = keys.privateKey, kid = keys.kid) =>
  new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(key);

async function rejection(token: string | undefined) {
  const error = await tokens.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AccessTokenRejected);
  return (error as AccessTokenRejected).reason;
}

describe('verifyAccessToken', () => {
  it('returns the seller, country, tenant, client and scope of an issued token', async () => {
    const { accessToken } = await tokens.issue(SELLER);
    expect(await tokens.verify(accessToken)).toEqual({ ...SELLER, scope: GATEWAY_SCOPE });
  });

  it('keeps accepting a verified token from memory, and refuses it once it has expired', async () => {
    const token = await sign(claims({ exp: now() + 5 }));
    const signatureChecks = vi.spyOn(crypto.subtle, 'verify');
    expect((await tokens.verify(token)).sellerId).toBe(SELLER.sellerId);
    expect(signatureChecks).toHaveBeenCalledTimes(1);
    expect(await tokens.verify(token)).toEqual({ ...SELLER, scope: GATEWAY_SCOPE });
    expect(signatureChecks).toHaveBeenCalledTimes(1); // the remembered verification
    signatureChecks.mockRestore();
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(Date.now() + 6_000);
    vi.advanceTimersByTime(6_000);
    expect(await rejection(token)).toBe('expired');
  });

  it('never remembers a refused token: the same string is refused again, for the same reason', async () => {
    const [header, , signature] = (await sign(claims())).split('.');
    const tampered = `${header}.${base64url.encode(JSON.stringify(claims({ 'x-seller-id': 'someone-else' })))}.${signature}`;
    expect(await rejection(tampered)).toBe('invalid');
    expect(await rejection(tampered)).toBe('invalid');
  });

  describe('one spelling per token', () => {
    const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    /** The same signature with s replaced by n − s, which ES256 verifies alike. */
    const otherS = (token: string) => {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const bytes = Buffer.from(signature, 'base64url');
      const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
      const flipped = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
      return `${header}.${payload}.${Buffer.concat([bytes.subarray(0, 32), flipped]).toString('base64url')}`;
    };

    it('knows the two s of a signature as one token: the other costs no signature check', async () => {
      const token = await sign(claims({ jti: 'a1b2c3d4-0000-4000-8000-000000000001' }));
      const variant = otherS(token);
      expect(variant).not.toBe(token);
      const signatureChecks = vi.spyOn(crypto.subtle, 'verify');
      try {
        expect(await tokens.verify(variant)).toEqual({ ...SELLER, scope: GATEWAY_SCOPE }); // a valid signature
        expect(signatureChecks).toHaveBeenCalledTimes(1);
        expect(await tokens.verify(token)).toEqual({ ...SELLER, scope: GATEWAY_SCOPE });
        expect(await tokens.verify(variant)).toEqual({ ...SELLER, scope: GATEWAY_SCOPE });
        expect(signatureChecks).toHaveBeenCalledTimes(1); // both remembered as one
      } finally {
        signatureChecks.mockRestore();
      }
    });

    it('refuses a signature that is not canonical base64url (padding, unused bits set, other characters)', async () => {
      const token = await sign(claims());
      const last = token.at(-1)!;
      // 64 bytes are 86 base64url characters, the last holding 2 bits and 4 unused ones (zero).
      const unusedBitSet = `${token.slice(0, -1)}${'AQgw'.includes(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : last}`;
      expect(unusedBitSet).not.toBe(token);
      for (const spelling of [`${token}==`, `${token}=`, unusedBitSet, `${token.slice(0, -2)}+${token.at(-1)}`, `${token.slice(0, -10)} ${token.slice(-10)}`]) {
        expect(await rejection(spelling), spelling).toBe('malformed');
      }
      expect((await tokens.verify(token)).sellerId).toBe(SELLER.sellerId); // the token itself, as issued
    });
  });

  it('refuses a token living longer than 3599 s (one second of rounding let through), and accepts one of 3599 s', async () => {
    const t = now();
    expect(await rejection(await sign(claims({ iat: t, exp: t + 3601 })))).toBe('invalid');
    expect(await rejection(await sign(claims({ iat: t, exp: t + 10 * 365 * 86_400 })))).toBe('invalid');
    expect((await tokens.verify(await sign(claims({ iat: t, exp: t + 3600 })))).sellerId).toBe(SELLER.sellerId);
    expect((await tokens.verify(await sign(claims({ iat: t, exp: t + 3599, jti: 'a1b2c3d4-0000-4000-8000-000000000002' })))).sellerId).toBe(SELLER.sellerId);
  });

  it('issues tokens whose exp is iat + 3599 even when the clock crosses a second while it signs', async () => {
    // A clock 1 ms before a second, moving 1 ms at each reading: two readings (iat, then exp) straddled it.
    let reading = Math.ceil(Date.now() / 1000) * 1000 - 1;
    vi.spyOn(Date, 'now').mockImplementation(() => reading++);
    const { accessToken } = await tokens.issue(SELLER);
    vi.restoreAllMocks();
    const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8'));
    expect(payload.exp - payload.iat).toBe(3599);
  });

  it('refuses a token whose typ is not JWT, or that has none', async () => {
    const withTyp = (typ?: string) => new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: keys.kid, ...(typ ? { typ } : {}) }).sign(keys.privateKey);
    expect(await rejection(await withTyp('dpop+jwt'))).toBe('invalid');
    expect(await rejection(await withTyp('at+jwt'))).toBe('invalid');
    expect(await rejection(await withTyp())).toBe('invalid');
    expect((await tokens.verify(await withTyp('JWT'))).sellerId).toBe(SELLER.sellerId);
  });

  it('refuses a missing token', async () => {
    expect(await rejection(undefined)).toBe('missing');
    expect(await rejection('')).toBe('missing');
  });

  it('refuses a malformed token', async () => {
    expect(await rejection('not-a-jwt')).toBe('malformed');
    expect(await rejection('a.b.c')).toBe('malformed');
  });

  it('refuses an expired token', async () => {
    expect(await rejection(await sign(claims({ iat: now() - 7200, exp: now() - 3600 })))).toBe('expired');
  });

  it('refuses a tampered token (payload changed, signature kept)', async () => {
    const [header, , signature] = (await sign(claims())).split('.');
    const forged = base64url.encode(JSON.stringify(claims({ 'x-seller-id': '11111111-2222-4333-8444-555555555555' })));
    expect(await rejection(`${header}.${forged}.${signature}`)).toBe('invalid');
  });

  it('refuses a token signed by another key, even under the right kid', async () => {
    const other = await generateKeyPair('ES256');
    expect(await rejection(await sign(claims(), other.privateKey))).toBe('invalid');
  });

  it('refuses alg: none', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify(claims()));
    expect(await rejection(`${header}.${payload}.`)).toBe('invalid');
  });

  it('refuses HS256 signed with the public key (algorithm confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(keys.jwks.keys[0]));
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: keys.kid }).sign(secret);
    expect(await rejection(token)).toBe('invalid');
  });

  it('refuses a token issued in the future beyond 60 s of clock skew, and accepts one within it', async () => {
    // The clock stands still: a second that turned between signing and verifying made +61 s a 60.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
    expect(await rejection(await sign(claims({ iat: now() + 61, exp: now() + 3600 })))).toBe('invalid');
    expect(await rejection(await sign(claims({ iat: now() + 86_400, exp: now() + 90_000 })))).toBe('invalid');
    expect((await tokens.verify(await sign(claims({ iat: now() + 30 })))).sellerId).toBe(SELLER.sellerId);
    expect((await tokens.verify(await sign(claims({ iat: now() + 60 })))).sellerId).toBe(SELLER.sellerId); // the limit itself
  });

  it('refuses another issuer', async () => {
    expect(await rejection(await sign(claims({ iss: 'https://elsewhere.example' })))).toBe('invalid');
  });

  it('refuses a token without the gateway scope', async () => {
    expect(await rejection(await sign(claims({ scope: 'other:scope' })))).toBe('insufficient_scope');
  });

  it('accepts the sample scope spelling digital-platform:gateway-api', async () => {
    const token = await sign(claims({ scope: 'digital-platform:gateway-api' }));
    expect((await tokens.verify(token)).scope).toBe('digital-platform:gateway-api');
  });

  it('refuses a token without a required claim', async () => {
    const { jti: _jti, ...withoutJti } = claims();
    expect(await rejection(await sign(withoutJti))).toBe('invalid');
    const { country: _country, ...withoutCountry } = claims();
    expect(await rejection(await sign(withoutCountry))).toBe('invalid');
  });

  it('returns a seller id that is not a GUID as it is: the payment link API answers it with guid_error', async () => {
    const claimsOf = await tokens.verify(await sign(claims({ 'x-seller-id': 'seller-42' })));
    expect(claimsOf.sellerId).toBe('seller-42');
    expect(isGuid(claimsOf.sellerId)).toBe(false);
  });
});

describe('isGuid', () => {
  it.each([
    ['3fa85f64-5717-4562-b3fc-2c963f66afa6', true],
    ['3FA85F64-5717-4562-B3FC-2C963F66AFA6', true],
    ['3fa85f6457174562b3fc2c963f66afa6', false],
    ['{3fa85f64-5717-4562-b3fc-2c963f66afa6}', false],
    ['seller-42', false],
    ['', false],
  ])('%s → %s', (value, expected) => expect(isGuid(value)).toBe(expected));
});

describe('signing keys', () => {
  it('are generated once and kept in the store', async () => {
    const again = await loadSigningKeys(authenticationRepository(store));
    expect(again.kid).toBe(keys.kid);
    const { rows } = await store.query('SELECT kid, active FROM signing_keys');
    expect(rows).toEqual([{ kid: keys.kid, active: true }]);
  });
});
