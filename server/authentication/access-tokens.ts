// Access tokens: ES256 JWTs issued for an API client and verified on every bearer call.
import { randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { SIGNING_ALGORITHM, type SigningKeyRing, type SigningKeys } from './keys.ts';
import { GATEWAY_SCOPE, grantsGateway } from './scope.ts';

/** Seed: "usually 3599 seconds, about one hour". */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3599;
/** Clocks of issuers and of this server may differ this much: an `iat` further in the future is refused. */
export const IAT_SKEW_SECONDS = 60;

/** What a verified token says; the seller id is raw (payment link answers a non-GUID with guid_error). */
export interface AccessTokenClaims {
  sellerId: string;
  country: string;
  tenant: string;
  clientId: string;
  scope: string;
}

export interface IssuedAccessToken {
  accessToken: string;
  expiresIn: number;
  scope: string;
}

export type AccessTokenRejection = 'missing' | 'malformed' | 'expired' | 'invalid' | 'insufficient_scope';

export class AccessTokenRejected extends Error {
  constructor(readonly reason: AccessTokenRejection, message: string) {
    super(message);
    this.name = 'AccessTokenRejected';
  }
}

export type VerifyAccessToken = (token: string | undefined) => Promise<AccessTokenClaims>;

const CLAIMS = ['sub', 'x-seller-id', 'country', 'tenant', 'scope', 'iat', 'exp', 'jti'];

/**
 * Tokens already verified, with their claims, until they expire: a token is sent on every call of
 * its hour, and an ES256 signature check costs ~0.1 ms of CPU each time (`make bench`). Only tokens
 * that passed every check below are kept, keyed by the token's one spelling (canonicalToken); an entry dies with the
 * token's `exp` (so an expired token is never served from here) and the oldest go first past
 * MAX_VERIFIED_TOKENS. Each entry keeps the `kid` it was verified with and is served only while
 * that key is still published: a rotation that revokes its key (a leak) refuses the tokens it signed
 * at once here, and in other instances when they read the keys again (within 30 s).
 */
const MAX_VERIFIED_TOKENS = 10_000;

/** P-256's group order n: an ECDSA signature (r, s) verifies as (r, n − s) too. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * The token as the verified-token cache keys it, one spelling per token: ES256 verifies a signature
 * whose s is replaced by n − s as well (jose accepts both, as RFC 7518 does), so the cache knows a
 * token by its low-s spelling and another spelling of a verified token costs no signature check and
 * no place of its own. Undefined when the signature is not canonical base64url (padding, unused
 * bits set, other characters), which no signer writes: such a token is refused as malformed.
 */
export function canonicalToken(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return token; // not a compact JWS: jose refuses it
  const [header, payload, signature] = parts as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.toString('base64url') !== signature) return undefined;
  if (bytes.length !== 64) return token; // not an ES256 signature: jose refuses it
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  if (s === 0n || s >= P256_ORDER || s <= P256_ORDER / 2n) return token; // 0 and n or more: no valid signature, jose refuses it
  const low = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return `${header}.${payload}.${Buffer.concat([bytes.subarray(0, 32), low]).toString('base64url')}`;
}

/** Keys read once (tests), or the running server's ring (rotations, other instances' rotations). */
const ringOf = (keys: SigningKeys | SigningKeyRing): Pick<SigningKeyRing, 'current' | 'forKid'> =>
  'current' in keys ? keys : { current: async () => keys, forKid: async () => keys };

export function accessTokens(keys: SigningKeys | SigningKeyRing, issuer: string) {
  const ring = ringOf(keys);
  /** The key of the token's `kid`, from the keys as they are now. */
  const keyOfToken: JWTVerifyGetKey = async (header, token) => (await ring.forKid(header.kid)).keySet(header, token);

  async function issue(client: { clientId: string; sellerId: string; country: string; tenant: string }): Promise<IssuedAccessToken> {
    const { kid, privateKey } = await ring.current();
    // One reading of the clock for both claims: two could straddle a second, and exp − iat be 3600.
    const issuedAt = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({
      'x-seller-id': client.sellerId,
      country: client.country,
      tenant: client.tenant,
      scope: GATEWAY_SCOPE,
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' })
      .setSubject(client.clientId)
      .setIssuer(issuer)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ACCESS_TOKEN_LIFETIME_SECONDS)
      .setJti(randomUUID())
      .sign(privateKey);
    return { accessToken, expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS, scope: GATEWAY_SCOPE };
  }

  const verified = new LRUCache<string, { claims: AccessTokenClaims; expiresAtMs: number; kid: string | undefined }>({ max: MAX_VERIFIED_TOKENS });
  /** Whether the key of `kid` is still published (a revoked key is not). */
  const published = async (kid: string | undefined) => (await ring.forKid(kid)).jwks.keys.some((k) => k.kid === kid);

  const verify: VerifyAccessToken = async (token) => {
    if (!token) throw new AccessTokenRejected('missing', 'Missing bearer token');
    const key = canonicalToken(token);
    if (key === undefined) throw new AccessTokenRejected('malformed', 'The access token is malformed');
    const known = verified.get(key);
    // The wall clock, as jose reads it (the cache's own ttl runs on a monotonic clock): past `exp`, the
    // entry goes and the token takes the full path, which refuses it as expired.
    if (known && Date.now() < known.expiresAtMs && (await published(known.kid))) return known.claims;
    if (known) verified.delete(key);
    let payload;
    let kid;
    try {
      // Only ES256 is accepted: `alg: none`, HMAC with the public key and other algorithms are refused;
      // and only the `typ` this server writes.
      ({ payload, protectedHeader: { kid } } = await jwtVerify(token, keyOfToken, { algorithms: [SIGNING_ALGORITHM], issuer, requiredClaims: CLAIMS, typ: 'JWT' }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new AccessTokenRejected('expired', 'The access token has expired');
      if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
        throw new AccessTokenRejected('malformed', 'The access token is malformed');
      }
      throw new AccessTokenRejected('invalid', 'The access token is not valid');
    }
    // Issued in the future (beyond clock skew): not a token this server issued as it says.
    if (typeof payload.iat !== 'number' || payload.iat > Date.now() / 1000 + IAT_SKEW_SECONDS) {
      throw new AccessTokenRejected('invalid', 'The access token is not valid');
    }
    // Living longer than this server's tokens do: not a token it issued. One second more is let
    // through: earlier versions read the clock twice, for iat and for exp, and could straddle a second.
    if (typeof payload.exp !== 'number' || payload.exp - payload.iat > ACCESS_TOKEN_LIFETIME_SECONDS + 1) {
      throw new AccessTokenRejected('invalid', 'The access token is not valid');
    }
    const text = (claim: string) => (typeof payload[claim] === 'string' ? (payload[claim] as string) : undefined);
    const [sellerId, country, tenant, clientId] = ['x-seller-id', 'country', 'tenant', 'sub'].map(text);
    if (sellerId === undefined || country === undefined || tenant === undefined || clientId === undefined) {
      throw new AccessTokenRejected('malformed', 'The access token is malformed');
    }
    if (!grantsGateway(payload.scope)) {
      throw new AccessTokenRejected('insufficient_scope', `The access token lacks the scope ${GATEWAY_SCOPE}`);
    }
    // Its key revoked while the signature was being checked: refused, and not kept as verified.
    if (!(await published(kid))) throw new AccessTokenRejected('invalid', 'The access token is not valid');
    const claims = { sellerId, country, tenant, clientId, scope: payload.scope as string };
    // jose refuses a token once `exp <= now` (whole seconds): the entry lives until that instant.
    const expiresAtMs = (payload.exp as number) * 1000;
    if (expiresAtMs > Date.now()) verified.set(key, { claims, expiresAtMs, kid }, { ttl: expiresAtMs - Date.now() });
    return claims;
  };

  return { issue, verify };
}

export type AccessTokens = ReturnType<typeof accessTokens>;
