// The ES256 key pairs that sign access tokens: generated on first start, kept in the store (the
// private half sealed at rest) so that tokens survive a restart and every instance on one PostgreSQL
// signs with the same key. A sandbox operation rotates the key: new tokens are signed with a new
// one, and the retired key stays published (and verifying) while tokens it signed may be alive.
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import { wrongEncryptionKey } from '../store/secrets-at-rest-check.ts';
import { SealedSecretUnreadable } from '../store/sealed-secrets.ts';
import type { Store } from '../store/store.ts';
import { authenticationRepository, type AuthenticationRepository, type PublicJwk } from './repository.ts';

export const SIGNING_ALGORITHM = 'ES256';

/** The keys as read at one moment. */
export interface SigningKeys {
  /** `kid` of the active key, written in every token header. */
  kid: string;
  privateKey: CryptoKey;
  /** Public keys (active, and retired ones still published), as served at `GET /sandbox/v1/jwks`. */
  jwks: { keys: PublicJwk[] };
  /** Key lookup by `kid` for verification. */
  keySet: ReturnType<typeof createLocalJWKSet>;
}

export interface SigningKeyOptions {
  /** How long a retired key stays published and verifying (index.ts: a token's lifetime and margins). */
  retiredKeyPublishedMs?: number;
}

/** Without a token lifetime to go by (tests reading the keys): an hour and a quarter. */
const DEFAULT_RETIRED_KEY_PUBLISHED_MS = 75 * 60_000;

async function newKeyPair(): Promise<{ kid: string; privateJwk: JWK; publicJwk: PublicJwk }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk); // RFC 7638: stable, derived from the key itself
  const common = { kty: 'EC', kid, alg: SIGNING_ALGORITHM, use: 'sig' };
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), ...common }, publicJwk: { ...publicJwk, ...common } };
}

const WRONG_ENCRYPTION_KEY = wrongEncryptionKey('The stored token signing key');

async function listKeys(repository: AuthenticationRepository, publishedMs: number) {
  try {
    return await repository.listSigningKeys(new Date(Date.now() - publishedMs));
  } catch (error) {
    throw error instanceof SealedSecretUnreadable ? new Error(WRONG_ENCRYPTION_KEY, { cause: error }) : error;
  }
}

/** Reads the keys, creating the active one when there is none. */
export async function loadSigningKeys(
  repository: AuthenticationRepository,
  { retiredKeyPublishedMs = DEFAULT_RETIRED_KEY_PUBLISHED_MS }: SigningKeyOptions = {},
): Promise<SigningKeys> {
  let stored = await listKeys(repository, retiredKeyPublishedMs);
  if (!stored.some((key) => key.active)) {
    await repository.insertActiveSigningKey(await newKeyPair());
    stored = await listKeys(repository, retiredKeyPublishedMs);
  }
  const active = stored.find((key) => key.active);
  if (!active?.privateJwk) throw new Error('No active signing key after creating one');
  const jwks = { keys: stored.map((key) => key.publicJwk) };
  return {
    kid: active.kid,
    privateKey: (await importJWK(active.privateJwk, SIGNING_ALGORITHM)) as CryptoKey,
    jwks,
    keySet: createLocalJWKSet(jwks),
  };
}

/**
 * Every instance reads the keys again after this time. A rotation is announced (Store.onAnnounced:
 * the other instances on one PostgreSQL database hear it through NOTIFY) and read again at once; the
 * refresh covers an announcement lost (a listening connection down).
 */
export const SIGNING_KEYS_REFRESH_MS = 30_000;
/** A token with a `kid` not yet known reads the keys again at once, but not more than once a second. */
const UNKNOWN_KID_REFRESH_MS = 1_000;

export interface SigningKeyRotation {
  kid: string;
  previousKid: string | undefined;
  /** Until when the key set still publishes the previous key. */
  previousPublishedUntil: Date;
}

/**
 * The keys of a running server: read again now and then, and rotated on request. `onReadFailed` is
 * told once when reading them again fails after reads that worked (the keys read last are kept:
 * a rotation elsewhere, or a key sealed with another encryption key, is not seen until it works),
 * `onReadAgain` when a read works again.
 */
export async function signingKeyRing(
  store: Store,
  options: Required<SigningKeyOptions>,
  onReadFailed?: (error: Error) => void,
  onReadAgain?: () => void,
) {
  const repository = authenticationRepository(store);
  // Listening begins before the first read: a rotation announced during that read (or, on
  // PostgreSQL, before this instance's LISTEN connection was up: it wakes every topic once it
  // listens) is read once more right after it, not at the next refresh.
  let announcedDuringFirstRead = false;
  let onRotated = () => void (announcedDuringFirstRead = true);
  const stopListening = store.onAnnounced?.('signing-keys-rotated', () => onRotated());
  let keys: SigningKeys;
  try {
    keys = await loadSigningKeys(repository, options);
  } catch (error) {
    stopListening?.();
    throw error;
  }
  let readAt = Date.now();
  let reading: Promise<SigningKeys> | undefined;
  /** A rotation was announced while a read was in flight: another read follows it. */
  let readAgain = false;
  /** Counts this instance's rotations: a read begun before one does not replace the keys after it. */
  let rotations = 0;
  /**
   * This instance rotated, and could not read the keys after it: they are read again a second after
   * each failed read, not 30 s (the keys held are from before the rotation, a revoked one included).
   */
  let rotatedUnread = false;
  const take = (fresh: SigningKeys) => ((keys = fresh), (readAt = Date.now()), (rotatedUnread = false), fresh);
  let failing = false;
  /**
   * A failed read keeps the keys already known, and is tried again after the same time as a read
   * that worked (not at every call: each would query the store while it fails).
   */
  const read = (): Promise<SigningKeys> => {
    const before = rotations;
    return (reading ??= loadSigningKeys(repository, options)
      .then((fresh) => {
        if (failing) onReadAgain?.();
        failing = false;
        return rotations === before ? take(fresh) : keys;
      })
      .catch((error: Error) => {
        if (!failing) onReadFailed?.(error);
        failing = true;
        readAt = Date.now();
        return keys;
      })
      .finally(() => {
        reading = undefined;
        if (readAgain) {
          readAgain = false;
          void read();
        }
      }));
  };
  const olderThan = (ms: number) => Date.now() - readAt >= ms;
  const refreshMs = () => (rotatedUnread ? UNKNOWN_KID_REFRESH_MS : SIGNING_KEYS_REFRESH_MS);
  // Another instance's rotation (a revoked key above all) is read as soon as it is announced. A read
  // in flight may have begun before that rotation committed: then one more follows it.
  onRotated = () => {
    if (reading) readAgain = true;
    else void read();
  };
  if (announcedDuringFirstRead) await read();

  return {
    async current(): Promise<SigningKeys> {
      return olderThan(refreshMs()) ? read() : keys;
    },

    /** The keys for verifying a token signed with `kid` (read again when it is new here). */
    async forKid(kid: string | undefined): Promise<SigningKeys> {
      const known = keys.jwks.keys.some((key) => key.kid === kid);
      return (!known && olderThan(UNKNOWN_KID_REFRESH_MS)) || olderThan(refreshMs()) ? read() : keys;
    },

    /**
     * A new active key; the previous one is retired (its private half dropped) and stays published.
     * Revoking (a key that may have leaked) deletes it at once instead, with every key retired
     * before it, still published or not: the leaked one may be any of them, and whichever it is,
     * only tokens of the new key verify from then on.
     */
    async rotate({ revoke = false }: { revoke?: boolean } = {}): Promise<SigningKeyRotation> {
      const next = await newKeyPair();
      const now = new Date();
      const previousKid = await store.transaction(async (tx) => {
        const keysInTx = authenticationRepository(tx);
        await keysInTx.lockSigningKeys();
        const retired = await keysInTx.retireActiveSigningKey(now);
        if (revoke) await keysInTx.deleteRetiredSigningKeys();
        else await keysInTx.deleteSigningKeysRetiredBefore(new Date(now.getTime() - options.retiredKeyPublishedMs));
        await keysInTx.insertActiveSigningKey(next);
        return retired;
      });
      rotations++;
      // Announced before this instance reads the keys again: should that read fail, the others still
      // hear of the rotation (a revoke above all), and this one reads them at its next call.
      store.announce?.('signing-keys-rotated');
      try {
        take(await loadSigningKeys(repository, options));
      } catch (error) {
        rotatedUnread = true;
        throw error;
      }
      return { kid: next.kid, previousKid, previousPublishedUntil: revoke ? now : new Date(now.getTime() + options.retiredKeyPublishedMs) };
    },
  };
}

export type SigningKeyRing = Awaited<ReturnType<typeof signingKeyRing>>;
