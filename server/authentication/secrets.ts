// Client secrets are stored as scrypt hashes with a salt of their own, in a self-describing string
// (PHC format: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`), so the cost can change without a migration:
// a hash is verified at the cost it was made with.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (secret: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(secret, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

export interface HashCost {
  /** log2 of scrypt's N. */
  ln: number;
  r: number;
  p: number;
}

/**
 * Hashes kept in a data directory or on PostgreSQL: 2^15 × 8 × 128 bytes = 32 MiB of memory and
 * 65–230 ms of one CPU per hash on the machine of bench/RESULTS.md, so that a copy of the database
 * does not give the secrets away.
 */
export const STORED_COST: HashCost = { ln: 15, r: 8, p: 1 };
/**
 * Hashes of a store in memory (`storage: 'memory'`, `DATA_DIR=memory://`): 1 MiB, a thirty-second of
 * the work. Nothing of such a store outlives its process, and within the process the secrets pass in
 * clear anyway (each token request carries one), so the stored cost would protect nothing there; it
 * would only make each seller a test creates, and its first token, cost a tenth of a second or more.
 */
export const IN_MEMORY_COST: HashCost = { ln: 10, r: 8, p: 1 };

/** A cost as the PHC string writes it (`ln=15,r=8,p=1`). */
export const costParameters = ({ ln, r, p }: HashCost) => `ln=${ln},r=${r},p=${p}`;

/** The cost of the hashes `store` keeps (openStore says whether it is in memory). */
export const hashCostOf = (store: { readonly inMemory?: boolean }): HashCost => (store.inMemory ? IN_MEMORY_COST : STORED_COST);
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PHC = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

const b64 = (buffer: Buffer) => buffer.toString('base64').replace(/=+$/, '');
const maxmem = (ln: number, r: number) => 256 * 2 ** ln * r; // twice what scrypt needs

/** `cost`: the store's (hashCostOf), the stored one unless said. */
export async function hashClientSecret(secret: string, cost: HashCost = STORED_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const { ln, r, p } = cost;
  const key = await scrypt(secret, salt, KEY_BYTES, { N: 2 ** ln, r, p, maxmem: maxmem(ln, r) });
  return `$scrypt$${costParameters(cost)}$${b64(salt)}$${b64(key)}`;
}

/** Constant-time comparison of a presented secret with a stored hash; false for a malformed hash. */
export async function verifyClientSecret(secret: string, stored: string): Promise<boolean> {
  const match = PHC.exec(stored);
  if (!match) return false;
  const [, ln, r, p, salt, hash] = match.map(String);
  const expected = Buffer.from(hash!, 'base64');
  const key = await scrypt(secret, Buffer.from(salt!, 'base64'), expected.length, {
    N: 2 ** Number(ln),
    r: Number(r),
    p: Number(p),
    maxmem: maxmem(Number(ln), Number(r)),
  });
  return timingSafeEqual(key, expected);
}

const dummyHashes = new Map<string, Promise<string>>();
/**
 * A hash of a random secret nobody knows, at the store's cost: an unknown client id is checked
 * against it, so that it costs the same scrypt time as a known one and timing reveals nothing.
 */
export function hashForUnknownClient(cost: HashCost = STORED_COST): Promise<string> {
  const key = costParameters(cost);
  let hash = dummyHashes.get(key);
  if (!hash) dummyHashes.set(key, (hash = hashClientSecret(randomBytes(32).toString('base64'), cost)));
  return hash;
}
