// Where the store's encryption key (sealed-secrets.ts) comes from, the first that applies:
// 1. SANDBOX_ENCRYPTION_KEY: 32 bytes, as 64 hex digits or as base64 (or base64url).
// 2. DATABASE_URL without it: derived from the URL, exactly as written (HKDF-SHA-256), so that every
//    instance given the same URL agrees, and a dump or backup of the database alone does not open
//    the secrets. Anyone who knows the URL can derive it: a shared deployment sets its own key.
// 3. A PGlite data directory: the file `<data directory>.encryption-key` beside it (not inside, so
//    that a copy of the directory does not carry it), created once with mode 0600; refused when
//    other users may read it.
// 4. PGlite in memory: a random key of this process (the data dies with the process anyway).
// A store read with another key than the one it was written with fails at start (keys.ts). To change
// the key, a start is given the new one and SANDBOX_PREVIOUS_ENCRYPTION_KEY, the old one (or the
// DATABASE_URL it was derived from): every secret sealed with the old key is sealed again with the
// new one (secrets-at-rest-check.ts), and the old key is needed no more.
import { hkdfSync, randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isOnDisk } from './data-directory.ts';
import { ENCRYPTION_KEY_BYTES } from './sealed-secrets.ts';

export interface EncryptionKeyOptions {
  /** SANDBOX_ENCRYPTION_KEY as given. */
  encryptionKey?: string;
  databaseUrl?: string;
  dataDir?: string;
}

/** 32 bytes from 64 hex digits or from base64 / base64url; throws on anything else. */
export function parseEncryptionKey(value: string, name = 'SANDBOX_ENCRYPTION_KEY'): Buffer {
  const text = value.trim();
  const key = /^[0-9a-f]{64}$/i.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text, 'base64')
      : undefined;
  if (key?.length !== ENCRYPTION_KEY_BYTES) {
    throw new Error(`${name} must be ${ENCRYPTION_KEY_BYTES} random bytes, as 64 hex digits or as base64 (openssl rand -base64 32)`);
  }
  return key;
}

/** The key file of a PGlite data directory: beside it, not inside. */
export const encryptionKeyFileOf = (dataDir: string) => `${dataDir.replace(/\/+$/, '')}.encryption-key`;

/** The key of a store given DATABASE_URL and no SANDBOX_ENCRYPTION_KEY: derived from the URL exactly as written. */
const derivedFrom = (databaseUrl: string) =>
  Buffer.from(hkdfSync('sha256', databaseUrl, 'payment-platform sandbox', 'encryption key at rest v1', ENCRYPTION_KEY_BYTES));

/** A PostgreSQL URL as DATABASE_URL takes it: `postgres://` or `postgresql://`, written without spaces. */
export const isPostgresUrl = (value: string) => /^postgres(ql)?:\/\/\S*$/.test(value);

/**
 * SANDBOX_PREVIOUS_ENCRYPTION_KEY: a key as SANDBOX_ENCRYPTION_KEY takes it, or the PostgreSQL URL a
 * key was derived from (as it was written in DATABASE_URL). Refused by name, never quoted (a URL may
 * hold a password).
 */
export function parsePreviousEncryptionKey(value: string): Buffer {
  if (isPostgresUrl(value)) return derivedFrom(value);
  try {
    return parseEncryptionKey(value);
  } catch {
    throw new Error(
      `SANDBOX_PREVIOUS_ENCRYPTION_KEY must be the key the secrets were sealed with: ${ENCRYPTION_KEY_BYTES} bytes as 64 hex digits or as base64, or the DATABASE_URL it was derived from (postgres://...), written without spaces`,
    );
  }
}

export interface ResolvedKey {
  key: Buffer;
  /** The key file this call made, when there was none beside the data directory. */
  madeFile?: string;
}

/**
 * The key, when it can be had without writing anything: undefined when the data directory's key
 * file is missing (resolveEncryptionKey makes it; open-store.ts has a PGlite store make it under
 * its directory's lock). A key file refused (unreadable, readable by others, not a key) throws.
 */
export async function existingEncryptionKey({ encryptionKey, databaseUrl, dataDir }: EncryptionKeyOptions): Promise<Buffer | undefined> {
  if (encryptionKey) return parseEncryptionKey(encryptionKey);
  if (databaseUrl) return derivedFrom(databaseUrl);
  if (!isOnDisk(dataDir)) return randomBytes(ENCRYPTION_KEY_BYTES);
  const file = encryptionKeyFileOf(dataDir);
  const existing = await stat(file).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)));
  if (!existing) {
    // A symbolic link to nothing is not a missing file: a new key file cannot be made in its place.
    if (await lstat(file).then(() => true, () => false)) throw new Error(`${file} holds the encryption key and is a symbolic link to nothing: point it at the key file, or remove it`);
    return undefined;
  }
  // A named pipe would hold the start forever, waiting for a writer; a directory has no key to read.
  if (!existing.isFile()) throw new Error(`${file} holds the encryption key and is not a file: put the key file there`);
  if ((existing.mode & 0o077) !== 0) {
    throw new Error(`${file} holds the encryption key and other users may read it (mode ${(existing.mode & 0o777).toString(8)}): chmod 600 ${file}`);
  }
  return parseEncryptionKey(await readFile(file, 'utf8'), file);
}

/** The key; a data directory's key file is made (mode 0600) when it is missing. */
export async function resolveEncryptionKey(options: EncryptionKeyOptions): Promise<ResolvedKey> {
  const key = await existingEncryptionKey(options);
  return key ? { key } : makeKeyFile(encryptionKeyFileOf(options.dataDir!), options);
}

/** Creates the key file atomically (a complete file or none); one made meanwhile by another start is read instead. */
async function makeKeyFile(file: string, options: EncryptionKeyOptions): Promise<ResolvedKey> {
  // A name of this call's own: two starts on the same directory at once, in one process or in
  // two, each write theirs, and the first link wins.
  const partial = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  let made: boolean;
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(partial, `${randomBytes(ENCRYPTION_KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    made = await link(partial, file).then(
      () => true,
      (error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? false : Promise.reject(error)),
    );
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`The encryption key file ${file} could not be created (${reason}): give a data directory in a folder you can write to, or set SANDBOX_ENCRYPTION_KEY`, { cause: error });
  } finally {
    await unlink(partial).catch(() => {});
  }
  if (made) return { key: parseEncryptionKey(await readFile(file, 'utf8'), file), madeFile: file };
  const key = await existingEncryptionKey(options); // the other start's, checked as any key file is
  if (!key) throw new Error(`The encryption key file ${file} was made by another start and removed at once: start again`);
  return { key };
}
