// SQL of the authentication area: API clients (with their seller's token claims) and signing keys.
import type { JWK } from 'jose';
import type { Queryable } from '../store/store.ts';

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
  privateJwk: JWK;
  publicJwk: PublicJwk;
  active: boolean;
}

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

    async listSigningKeys(): Promise<StoredSigningKey[]> {
      const { rows } = await db.query<StoredSigningKey>(
        `SELECT kid, private_jwk AS "privateJwk", public_jwk AS "publicJwk", active
           FROM signing_keys ORDER BY created_at`,
      );
      return rows;
    },

    /** Stores a new active key unless another instance stored one first (one active key at most). */
    async insertActiveSigningKey(key: { kid: string; privateJwk: JWK; publicJwk: PublicJwk }): Promise<void> {
      await db.query(
        `INSERT INTO signing_keys (kid, private_jwk, public_jwk, active) VALUES ($1, $2, $3, true)
         ON CONFLICT (active) WHERE active DO NOTHING`,
        [key.kid, JSON.stringify(key.privateJwk), JSON.stringify(key.publicJwk)],
      );
    },
  };
}

export type AuthenticationRepository = ReturnType<typeof authenticationRepository>;
