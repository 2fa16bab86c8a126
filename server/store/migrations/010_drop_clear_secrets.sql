-- The clear columns 009 sealed are gone: nothing can write a secret in clear any more.
ALTER TABLE signing_keys DROP COLUMN private_jwk;
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_active_has_private_key CHECK (NOT active OR sealed_private_jwk IS NOT NULL);
ALTER TABLE web_checkout_configurations DROP COLUMN notification_password;
