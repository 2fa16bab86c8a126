// Secrets kept at rest (the private key that signs access tokens, merchants' notification
// passwords) are sealed with AES-256-GCM under the store's encryption key (encryption-key.ts): a
// copy of the data directory, a dump or a backup does not give them. Each value is bound to where it
// belongs (its table, column and row, as additional authenticated data), so a sealed value copied
// into another row does not open. Format: `v1.<iv>.<ciphertext>.<tag>`, base64url, a fresh 96-bit
// iv each time.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const ENCRYPTION_KEY_BYTES = 32;

/** A sealed value that does not open: another key, another row, or changed bytes. */
export class SealedSecretUnreadable extends Error {
  constructor(readonly context: string) {
    super(`A secret of ${context} cannot be decrypted with this encryption key (another key, or a changed value)`);
    this.name = 'SealedSecretUnreadable';
  }
}

export interface SealedSecrets {
  /** The sealed form of `plain`, bound to `context` (e.g. `signing_keys.private_jwk:<kid>`), under the current key. */
  seal(plain: string, context: string): string;
  /**
   * The clear value, opened with the current key, else with the previous one when there is one (a
   * key being changed); throws SealedSecretUnreadable when neither key, or the context, matches.
   */
  open(sealed: string, context: string): string;
  /** Which key opens `sealed`, without telling onPrevious; throws SealedSecretUnreadable when neither does. */
  keyOf(sealed: string, context: string): 'current' | 'previous';
  /** `sealed` sealed again under the current key, opened with either, without telling onPrevious. */
  resealed(sealed: string, context: string): string;
}

function checkedKey(key: Buffer): Buffer {
  if (key.length !== ENCRYPTION_KEY_BYTES) throw new Error(`The encryption key must be ${ENCRYPTION_KEY_BYTES} bytes, not ${key.length}`);
  return key;
}

/** The clear value of `sealed` under `key`, or undefined when that key (or the context) does not open it. */
function openWith(key: Buffer, sealed: string, context: string): string | undefined {
  const [version, iv, data, tag, ...rest] = sealed.split('.');
  if (version !== VERSION || iv === undefined || data === undefined || tag === undefined || rest.length > 0) return undefined;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8')).setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * `previous`: the key the secrets were sealed with before this one (SANDBOX_PREVIOUS_ENCRYPTION_KEY),
 * read but never written; `onPrevious` is told the context of each value `open` opened with it.
 */
export function sealedSecrets(key: Buffer, previous?: Buffer, onPrevious?: (context: string) => void): SealedSecrets {
  checkedKey(key);
  if (previous) checkedKey(previous);
  const withPrevious = (sealed: string, context: string) => {
    const plain = previous && openWith(previous, sealed, context);
    if (plain === undefined) throw new SealedSecretUnreadable(context);
    return plain;
  };
  const seal = (plain: string, context: string) => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv).setAAD(Buffer.from(context, 'utf8'));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, data, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  };
  return {
    seal,
    open(sealed, context) {
      const plain = openWith(key, sealed, context);
      if (plain !== undefined) return plain;
      const old = withPrevious(sealed, context);
      onPrevious?.(context);
      return old;
    },
    keyOf(sealed, context) {
      if (openWith(key, sealed, context) !== undefined) return 'current';
      withPrevious(sealed, context);
      return 'previous';
    },
    resealed: (sealed, context) => seal(openWith(key, sealed, context) ?? withPrevious(sealed, context), context),
  };
}

// What each sealed value is bound to: its column and row (a value copied to another row does not open).
/** Where a sealed private key belongs (bound into its sealing: server/store/sealed-secrets.ts). */
export const signingKeyContext = (kid: string) => `signing_keys.private_jwk:${kid}`;
/** Where a sealed notification password belongs (bound into its sealing). */
export const notificationPasswordContext = (sellerId: string) => `web_checkout_configurations.notification_password:${sellerId}`;
