-- Sellers, their API clients (client credentials) and the keys that sign access tokens.

CREATE TABLE sellers (
  seller_id   uuid PRIMARY KEY,
  merchant_id text NOT NULL,
  seller_code text NOT NULL,
  trade_name  text NOT NULL,
  email       text NOT NULL,
  country     text NOT NULL,
  currencies  text[] NOT NULL,
  services    jsonb NOT NULL,
  payments    jsonb NOT NULL,
  tenant      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- secret_hash is self-describing (scheme, cost parameters, salt, hash); never the secret itself.
CREATE TABLE api_clients (
  client_id   text PRIMARY KEY,
  seller_id   uuid NOT NULL REFERENCES sellers (seller_id) ON DELETE CASCADE,
  secret_hash text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_clients_seller_id ON api_clients (seller_id);

-- ES256 key pairs as JWKs. Inactive keys stay to verify tokens signed before a rotation.
CREATE TABLE signing_keys (
  kid         text PRIMARY KEY,
  private_jwk jsonb NOT NULL,
  public_jwk  jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  active      boolean NOT NULL DEFAULT true
);
-- At most one active key: instances starting at once agree on the key the first one stored.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (active) WHERE active;
