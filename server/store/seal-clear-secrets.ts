// The code step of migration 009: seals the secrets earlier versions kept in clear, in the
// migration's own transaction (so once, with the schema change), before 010 drops the clear columns.
// A retired signing key's private half is not kept at all: it never signs again.
import { notificationPasswordContext, signingKeyContext } from './sealed-secrets.ts';
import { sealedSecretsOf, type Queryable } from './store.ts';

export async function sealClearSecrets(tx: Queryable): Promise<void> {
  const atRest = sealedSecretsOf(tx);
  const keys = await tx.query<{ kid: string; jwk: string }>('SELECT kid, private_jwk::text AS jwk FROM signing_keys WHERE active');
  for (const { kid, jwk } of keys.rows) {
    await tx.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, atRest.seal(jwk, signingKeyContext(kid))]);
  }
  const passwords = await tx.query<{ sellerId: string; password: string }>(
    `SELECT seller_id AS "sellerId", notification_password AS password
       FROM web_checkout_configurations WHERE notification_password IS NOT NULL`,
  );
  for (const { sellerId, password } of passwords.rows) {
    await tx.query('UPDATE web_checkout_configurations SET sealed_notification_password = $2 WHERE seller_id = $1', [
      sellerId,
      atRest.seal(password, notificationPasswordContext(sellerId)),
    ]);
  }
}
