// Remembers successful client secret verifications, so that a client asking for tokens again does
// not pay scrypt (~100 ms and 32 MiB on the libuv pool) each time: only the first correct call for a
// (stored hash, secret) pair does.
//
// Why this is safe:
// - At rest nothing changes: the database keeps the slow, salted scrypt hash. scrypt protects the
//   stored hash if the database leaks; this cache lives only in process memory and is never persisted.
// - It holds an HMAC-SHA-256 of the secret under a random key of this process, never the secret: a
//   memory dump does not give the secret, nor a fast hash to guess it offline without the key.
// - Entries are keyed by the stored hash read from the database on each call, so a rotated, changed
//   or deleted credential is never answered from the cache.
// - Failure paths are unchanged: a wrong secret always waits for scrypt (entry or not, known client
//   or not; identical calls under way at once, for the same client id, share one), failures are
//   never remembered, and a mismatch keeps the entry (wrong guesses cannot evict a client's entry).
//   Only the correct secret is fast, which tells a caller nothing it did not know.
// - Bounded (least recently used entries evicted first), so memory cannot grow without bound.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { verifyClientSecret } from './secrets.ts';

export type SecretVerifier = (secret: string, stored: string) => Promise<boolean>;

export const MAX_VERIFIED_SECRETS = 10_000;

export interface VerifiedSecretsOptions {
  /** The slow verifier (scrypt); injectable so tests can count its calls. */
  verify?: SecretVerifier;
  maxEntries?: number;
}

export function verifiedSecrets({ verify = verifyClientSecret, maxEntries = MAX_VERIFIED_SECRETS }: VerifiedSecretsOptions = {}) {
  const key = randomBytes(32);
  /** Stored hash → HMAC of the secret that matched it; least recently used evicted first. */
  const entries = new LRUCache<string, Buffer>({ max: maxEntries });
  const mac = (secret: string) => createHmac('sha256', key).update(secret, 'utf8').digest();
  /**
   * Checks under way, by client id, stored hash and HMAC of the presented secret: calls that arrive
   * together with the same three (a client's burst of first calls) share one scrypt instead of
   * queueing one each on the thread pool. Only identical calls share, so they share the same answer.
   * The client id is part of the key because every unknown id is checked against one stored hash
   * (the service's dummy): without it, a call for an unknown id joined another unknown id's check
   * under way with the same secret and finished with it, while a known id waited for its own
   * scrypt, which told whether a client id exists.
   */
  const inFlight = new Map<string, Promise<boolean>>();

  return {
    /**
     * Whether the secret matches the stored hash: from memory when it did before, by `slow` otherwise
     * (this cache's `verify` unless the call brings its own: the service's bounded one). `clientId`
     * is the id presented with the secret, known or not.
     */
    async verify(secret: string, stored: string, { slow = verify, clientId = '' }: { slow?: SecretVerifier; clientId?: string } = {}): Promise<boolean> {
      const presented = mac(secret);
      const remembered = entries.get(stored);
      if (remembered && timingSafeEqual(presented, remembered)) return true;
      const pair = JSON.stringify([clientId, stored, presented.toString('base64')]);
      let check = inFlight.get(pair);
      if (!check) {
        check = slow(secret, stored)
          .then((matches) => {
            if (matches) entries.set(stored, presented);
            return matches;
          })
          .finally(() => inFlight.delete(pair));
        inFlight.set(pair, check);
      }
      return check;
    },

    get size() {
      return entries.size;
    },

    /** Copies of the entries, oldest first (for tests and diagnostics). */
    entries(): Array<[stored: string, mac: Buffer]> {
      return [...entries.rentries()].map(([stored, value]) => [stored as string, Buffer.from(value as Buffer)]);
    },
  };
}

export type VerifiedSecrets = ReturnType<typeof verifiedSecrets>;
