// The secrets at rest (the token signing keys' private halves, the merchants' notification
// passwords), checked at every start: each must open with the store's key, or with
// SANDBOX_PREVIOUS_ENCRYPTION_KEY while the key changes, else the start is refused, naming the row
// (a secret that opens with neither would fail later, in a token request, a webhook or a hosted page).
// Those only the previous key opens are sealed again with the current one: read first without
// locks, then locked and sealed again in one statement per table, so that instances starting
// together on one PostgreSQL do it once. A start cut short leaves each secret under one key or the
// other, and both still open it. Afterwards the previous key is needed no more.
import { notificationPasswordContext, SealedSecretUnreadable, signingKeyContext, type SealedSecrets } from './sealed-secrets.ts';
import { sealedSecretsOf, type Store } from './store.ts';

/** Where secrets are sealed: the table, its key column (and that column's type), the sealed column, and what each value is bound to. */
const SEALED = [
  { table: 'signing_keys', id: 'kid', type: 'text', column: 'sealed_private_jwk', context: signingKeyContext },
  { table: 'web_checkout_configurations', id: 'seller_id', type: 'uuid', column: 'sealed_notification_password', context: notificationPasswordContext },
] as const;

/** The refusal of a start that cannot open a secret, without any key or URL. */
export const wrongEncryptionKey = (what: string) =>
  `${what} cannot be decrypted: this server does not have the encryption key it was sealed with. ` +
  'Set SANDBOX_ENCRYPTION_KEY to that key (without it, the key is derived from DATABASE_URL exactly as written, ' +
  'or read from the file <data directory>.encryption-key beside a PGlite data directory). To change the key, start with ' +
  'the new one in SANDBOX_ENCRYPTION_KEY and the old one in SANDBOX_PREVIOUS_ENCRYPTION_KEY (or the DATABASE_URL it was derived from, exactly as it was written).';

function refusal(error: SealedSecretUnreadable, withPrevious: boolean): Error {
  const what = `A secret at rest (${error.context})`;
  return new Error(
    withPrevious
      ? `${what} opens neither with the encryption key nor with SANDBOX_PREVIOUS_ENCRYPTION_KEY: give the key it was sealed with in one of them (a DATABASE_URL exactly as it was written)`
      : wrongEncryptionKey(what),
    { cause: error },
  );
}

type SealedRow = { id: string; sealed: string };

/** The rows only the previous key opens; throws SealedSecretUnreadable when one opens with neither. */
const onPreviousKey = (atRest: SealedSecrets, rows: SealedRow[], context: (id: string) => string) =>
  rows.filter((row) => atRest.keyOf(row.sealed, context(row.id)) === 'previous');

/** Checks every secret at rest and seals again those only the previous key opens; returns how many it sealed again. */
export async function checkSecretsAtRest(store: Store, withPrevious: boolean): Promise<number> {
  let resealed = 0;
  try {
    for (const { table, id, type, column, context } of SEALED) {
      const read = `SELECT ${id}::text AS id, ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL`;
      const stale = onPreviousKey(sealedSecretsOf(store), (await store.query<SealedRow>(read)).rows, context);
      if (stale.length === 0) continue;
      resealed += await store.transaction(async (tx) => {
        // Read again under the lock: another instance may have sealed them again meanwhile.
        const ids = stale.map((row) => row.id);
        const atRest = sealedSecretsOf(tx);
        const again = onPreviousKey(atRest, (await tx.query<SealedRow>(`${read} AND ${id} = ANY($1::${type}[]) ORDER BY ${id} FOR UPDATE`, [ids])).rows, context);
        if (again.length === 0) return 0;
        await tx.query(`UPDATE ${table} AS t SET ${column} = u.sealed FROM unnest($1::${type}[], $2::text[]) AS u(id, sealed) WHERE t.${id} = u.id`, [
          again.map((row) => row.id),
          again.map((row) => atRest.resealed(row.sealed, context(row.id))),
        ]);
        return again.length;
      });
    }
  } catch (error) {
    throw error instanceof SealedSecretUnreadable ? refusal(error, withPrevious) : error;
  }
  return resealed;
}
