// The ES256 key pair that signs access tokens: generated on first start, kept in the store so that
// tokens survive a restart and every instance on one PostgreSQL signs with the same key.
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import type { AuthenticationRepository, PublicJwk } from './repository.ts';

export const SIGNING_ALGORITHM = 'ES256';

export interface SigningKeys {
  /** `kid` of the active key, written in every token header. */
  kid: string;
  privateKey: CryptoKey;
  /** Public keys (active and retired), as served at `GET /sandbox/v1/jwks`. */
  jwks: { keys: PublicJwk[] };
  /** Key lookup by `kid` for verification. */
  keySet: ReturnType<typeof createLocalJWKSet>;
}

async function newKeyPair(): Promise<{ kid: string; privateJwk: JWK; publicJwk: PublicJwk }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk); // RFC 7638: stable, derived from the key itself
  const common = { kty: 'EC', kid, alg: SIGNING_ALGORITHM, use: 'sig' };
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), ...common }, publicJwk: { ...publicJwk, ...common } };
}

export async function loadSigningKeys(repository: AuthenticationRepository): Promise<SigningKeys> {
  let stored = await repository.listSigningKeys();
  if (!stored.some((key) => key.active)) {
    await repository.insertActiveSigningKey(await newKeyPair());
    stored = await repository.listSigningKeys();
  }
  const active = stored.find((key) => key.active);
  if (!active) throw new Error('No active signing key after creating one');
  const jwks = { keys: stored.map((key) => key.publicJwk) };
  return {
    kid: active.kid,
    privateKey: (await importJWK(active.privateJwk, SIGNING_ALGORITHM)) as CryptoKey,
    jwks,
    keySet: createLocalJWKSet(jwks),
  };
}
