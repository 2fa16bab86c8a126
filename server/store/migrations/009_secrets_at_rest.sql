-- Secrets at rest are sealed (AES-256-GCM under the store's encryption key,
-- server/store/sealed-secrets.ts), never kept in clear. This migration adds the sealed columns; its
-- code step (server/store/seal-clear-secrets.ts), in the same transaction, seals what the clear
-- columns held, and 010 drops those.

-- The active key's private JWK, sealed. A retired key keeps only its public JWK (it never signs
-- again): it stays published while tokens it signed may still be alive.
ALTER TABLE signing_keys ADD COLUMN sealed_private_jwk text;
ALTER TABLE signing_keys ADD COLUMN retired_at timestamptz;

-- Recoverable (webhook deliveries send it as HTTP Basic), so sealed rather than hashed.
ALTER TABLE web_checkout_configurations ADD COLUMN sealed_notification_password text;
