// Client secrets are stored as scrypt hashes with a salt of their own, in a self-describing string
// (PHC format: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`), so the cost can change without a migration.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (secret: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(secret, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

/** 2^15 × 8 × 128 bytes = 32 MiB of memory and a few tens of milliseconds per hash. */
const COST = { ln: 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PHC = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

const b64 = (buffer: Buffer) => buffer.toString('base64').replace(/=+$/, '');
const maxmem = (ln: number, r: number) => 256 * 2 ** ln * r; // twice what scrypt needs

export async function hashClientSecret(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const { ln, r, p } = COST;
  const key = await scrypt(secret, salt, KEY_BYTES, { N: 2 ** ln, r, p, maxmem: maxmem(ln, r) });
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
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

let dummyHash: Promise<string> | undefined;
/**
 * A hash of a random secret nobody knows, with the current cost: an unknown client id is checked
 * against it, so that it costs the same scrypt time as a known one and timing reveals nothing.
 */
export function hashForUnknownClient(): Promise<string> {
  dummyHash ??= hashClientSecret(randomBytes(32).toString('base64'));
  return dummyHash;
}
