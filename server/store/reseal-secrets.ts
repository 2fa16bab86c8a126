// SANDBOX_PREVIOUS_ENCRYPTION_KEY: a start given it seals again, under the current key, every secret
// at rest that only the previous key opens (the token signing keys' private halves, the merchants'
// notification passwords), in one transaction that locks their rows: instances starting together on
// one PostgreSQL do it once, and a start cut short leaves every secret under one key or the other,
// each still opening with the two. Afterwards the previous key is needed no more.
import { notificationPasswordContext, SealedSecretUnreadable, signingKeyContext } from './sealed-secrets.ts';
import { sealedSecretsOf, type Store } from './store.ts';

/** How many secrets were sealed again; throws, naming the row, when one opens with neither key. */
export async function resealSecrets(store: Store): Promise<number> {
  try {
    return await store.transaction(async (tx) => {
      const atRest = sealedSecretsOf(tx);
      let resealed = 0;
      const keys = await tx.query<{ kid: string; sealed: string }>(
        'SELECT kid, sealed_private_jwk AS sealed FROM signing_keys WHERE sealed_private_jwk IS NOT NULL ORDER BY kid FOR UPDATE',
      );
      for (const { kid, sealed } of keys.rows) {
        const again = atRest.resealed(sealed, signingKeyContext(kid));
        if (again === undefined) continue;
        await tx.query('UPDATE signing_keys SET sealed_private_jwk = $2 WHERE kid = $1', [kid, again]);
        resealed += 1;
      }
      const passwords = await tx.query<{ sellerId: string; sealed: string }>(
        `SELECT seller_id AS "sellerId", sealed_notification_password AS sealed FROM web_checkout_configurations
          WHERE sealed_notification_password IS NOT NULL ORDER BY seller_id FOR UPDATE`,
      );
      for (const { sellerId, sealed } of passwords.rows) {
        const again = atRest.resealed(sealed, notificationPasswordContext(sellerId));
        if (again === undefined) continue;
        await tx.query('UPDATE web_checkout_configurations SET sealed_notification_password = $2 WHERE seller_id = $1', [sellerId, again]);
        resealed += 1;
      }
      return resealed;
    });
  } catch (error) {
    if (!(error instanceof SealedSecretUnreadable)) throw error;
    throw new Error(
      `A secret at rest (${error.context}) opens neither with the encryption key nor with SANDBOX_PREVIOUS_ENCRYPTION_KEY: give the key it was sealed with in one of them`,
      { cause: error },
    );
  }
}
