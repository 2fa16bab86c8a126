// SQL of the authentication area: API clients (with their seller's token claims) and signing keys
// (the private halves sealed at rest: server/store/sealed-secrets.ts).
import { signingKeyContext } from '../store/sealed-secrets.ts';
import type { JWK } from 'jose';
import { sealedSecretsOf, type Queryable } from '../store/store.ts';

/** An API client and what its access tokens say about its seller. */
export interface ApiClient {
  clientId: string;
  secretHash: string;
  sellerId: string;
  country: string;
  tenant: string;
}

/** A public key as published in the key set: always with its type and id. */
export type PublicJwk = JWK & { kty: string; kid: string };

export interface StoredSigningKey {
  kid: string;
  /** The active key's private JWK, opened; a retired key has none (it never signs again). */
  privateJwk?: JWK;
  publicJwk: PublicJwk;
  active: boolean;
  retiredAt: Date | null;
}


/** Any fixed number shared by every instance; it names the lock that serializes rotations. */
const ROTATION_LOCK = 7_242_002;

export function authenticationRepository(db: Queryable) {
  return {
    async findApiClient(clientId: string): Promise<ApiClient | undefined> {
      const { rows } = await db.query<ApiClient>(
        `SELECT c.client_id AS "clientId", c.secret_hash AS "secretHash",
                s.seller_id AS "sellerId", s.country, s.tenant
           FROM api_clients c JOIN sellers s ON s.seller_id = c.seller_id
          WHERE c.client_id = $1`,
        [clientId],
      );
      return rows[0];
    },

    async insertApiClient(client: { clientId: string; sellerId: string; secretHash: string }): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO api_clients (client_id, seller_id, secret_hash) VALUES ($1, $2, $3)
         ON CONFLICT (client_id) DO NOTHING`,
        [client.clientId, client.sellerId, client.secretHash],
      );
      return rowCount === 1;
    },

    /** The active key and the keys retired after `retiredSince`, oldest first. */
    async listSigningKeys(retiredSince: Date): Promise<StoredSigningKey[]> {
      const { rows } = await db.query<Omit<StoredSigningKey, 'privateJwk'> & { sealedPrivateJwk: string | null }>(
        `SELECT kid, sealed_private_jwk AS "sealedPrivateJwk", public_jwk AS "publicJwk", active, retired_at AS "retiredAt"
           FROM signing_keys WHERE active OR retired_at > $1 ORDER BY created_at`,
        [retiredSince],
      );
      return rows.map(({ sealedPrivateJwk, ...key }) => ({
        ...key,
        ...(sealedPrivateJwk !== null && { privateJwk: JSON.parse(sealedSecretsOf(db).open(sealedPrivateJwk, signingKeyContext(key.kid))) as JWK }),
      }));
    },

    /** Stores a new active key unless another instance stored one first (one active key at most). */
    async insertActiveSigningKey(key: { kid: string; privateJwk: JWK; publicJwk: PublicJwk }): Promise<void> {
      const sealed = sealedSecretsOf(db).seal(JSON.stringify(key.privateJwk), signingKeyContext(key.kid));
      await db.query(
        `INSERT INTO signing_keys (kid, sealed_private_jwk, public_jwk, active) VALUES ($1, $2, $3, true)
         ON CONFLICT (active) WHERE active DO NOTHING`,
        [key.kid, sealed, JSON.stringify(key.publicJwk)],
      );
    },

    /** In a transaction: waits for a rotation under way elsewhere to commit. */
    async lockSigningKeys(): Promise<void> {
      await db.query('SELECT pg_advisory_xact_lock($1)', [ROTATION_LOCK]);
    },

    /** Retires the active key at `at`, dropping its private half; its kid, if there was one. */
    async retireActiveSigningKey(at: Date): Promise<string | undefined> {
      const { rows } = await db.query<{ kid: string }>(
        'UPDATE signing_keys SET active = false, retired_at = $1, sealed_private_jwk = NULL WHERE active RETURNING kid',
        [at],
      );
      return rows[0]?.kid;
    },

    /** Forgets keys retired before `before` (no token they signed is alive any more). */
    /** Deletes every retired key: revoked, they verify nothing from then on. */
    async deleteRetiredSigningKeys(): Promise<void> {
      await db.query('DELETE FROM signing_keys WHERE NOT active');
    },

    async deleteSigningKeysRetiredBefore(before: Date): Promise<void> {
      await db.query('DELETE FROM signing_keys WHERE NOT active AND retired_at < $1', [before]);
    },
  };
}

export type AuthenticationRepository = ReturnType<typeof authenticationRepository>;
