// Secrets at rest: the token signing key and merchants' notification passwords are sealed with
// AES-256-GCM in the store (never in clear, read back after a restart with the same key, refused at
// start with another key), clear rows of earlier versions are sealed by migration 009, and the
// encryption key comes from SANDBOX_ENCRYPTION_KEY, DATABASE_URL, a 0600 file beside the data
// directory, or memory.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, jwtVerify, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokens } from '../../server/authentication/access-tokens.ts';
import { loadSigningKeys } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { createLogger } from '../../server/http/logging.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { encryptionKeyFileOf, parseEncryptionKey, parsePreviousEncryptionKey, resolveEncryptionKey } from '../../server/store/encryption-key.ts';
import { migrate } from '../../server/store/migrate.ts';
import { openStore } from '../../server/store/open-store.ts';
import { SealedSecretUnreadable, sealedSecrets } from '../../server/store/sealed-secrets.ts';
import { webCheckoutRepository } from '../../server/web-checkout/repository.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { DEMO, ISSUER, startTestServer, tokenForm, type TestServer } from './support/server.ts';
import { STORES, storeBeforeMigration } from './support/stores.ts';

const PASSWORD = 'n0tif1cation-Pa55word-in-clear';
const HEX_KEY = 'a1'.repeat(32);

describe('sealedSecrets', () => {
  const box = sealedSecrets(Buffer.alloc(32, 7));

  it('opens what it sealed, with a fresh iv each time, and never shows the clear value', () => {
    const [a, b] = [box.seal(PASSWORD, 'row:1'), box.seal(PASSWORD, 'row:1')];
    expect(a).toMatch(/^v1\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(PASSWORD);
    expect([box.open(a, 'row:1'), box.open(b, 'row:1')]).toEqual([PASSWORD, PASSWORD]);
  });

  it('refuses another row, another key, or a changed value', () => {
    const sealed = box.seal(PASSWORD, 'row:1');
    expect(() => box.open(sealed, 'row:2')).toThrow(SealedSecretUnreadable);
    expect(() => sealedSecrets(Buffer.alloc(32, 8)).open(sealed, 'row:1')).toThrow(SealedSecretUnreadable);
    const [v, iv, data, tag] = sealed.split('.');
    const flipped = `${data![0] === 'A' ? 'B' : 'A'}${data!.slice(1)}`;
    expect(() => box.open([v, iv, flipped, tag].join('.'), 'row:1')).toThrow(SealedSecretUnreadable);
    expect(() => box.open(PASSWORD, 'row:1')).toThrow(SealedSecretUnreadable);
  });
});

describe('sealedSecrets while the key changes (SANDBOX_PREVIOUS_ENCRYPTION_KEY)', () => {
  const [oldKey, newKey, otherKey] = [Buffer.alloc(32, 7), Buffer.alloc(32, 8), Buffer.alloc(32, 9)];
  const sealedOld = sealedSecrets(oldKey).seal(PASSWORD, 'row:1');

  it('opens what either key sealed, telling which rows the old one opened, and seals with the new one only', () => {
    const told: string[] = [];
    const box = sealedSecrets(newKey, oldKey, (context) => told.push(context));
    expect(box.open(sealedOld, 'row:1')).toBe(PASSWORD);
    expect(told).toEqual(['row:1']);
    const sealedNew = box.seal(PASSWORD, 'row:1');
    expect(box.open(sealedNew, 'row:1')).toBe(PASSWORD);
    expect(told).toEqual(['row:1']); // the new key opened it
    expect(sealedSecrets(newKey).open(sealedNew, 'row:1')).toBe(PASSWORD);
    expect(() => sealedSecrets(oldKey).open(sealedNew, 'row:1')).toThrow(SealedSecretUnreadable);
    expect(() => box.open(sealedOld, 'row:2')).toThrow(SealedSecretUnreadable); // still bound to its row
    expect(() => box.open(sealedSecrets(otherKey).seal(PASSWORD, 'row:1'), 'row:1')).toThrow(SealedSecretUnreadable);
  });

  it('says which key opens a value, and seals it again under the new key, without telling; refuses what neither opens', () => {
    const told: string[] = [];
    const box = sealedSecrets(newKey, oldKey, (context) => told.push(context));
    expect(box.keyOf(sealedOld, 'row:1')).toBe('previous');
    const again = box.resealed(sealedOld, 'row:1');
    expect(again).toMatch(/^v1\./);
    expect(sealedSecrets(newKey).open(again, 'row:1')).toBe(PASSWORD);
    expect(box.keyOf(again, 'row:1')).toBe('current');
    expect(told).toEqual([]);
    const foreign = sealedSecrets(otherKey).seal(PASSWORD, 'row:1');
    expect(() => box.keyOf(foreign, 'row:1')).toThrow(SealedSecretUnreadable);
    expect(() => box.resealed(foreign, 'row:1')).toThrow(SealedSecretUnreadable);
    expect(() => sealedSecrets(newKey).keyOf(sealedOld, 'row:1')).toThrow(SealedSecretUnreadable); // no previous key
  });

  it('takes the previous key as SANDBOX_ENCRYPTION_KEY does, or the DATABASE_URL it was derived from, and refuses the rest without quoting it', async () => {
    expect(parsePreviousEncryptionKey(HEX_KEY)).toEqual(parseEncryptionKey(HEX_KEY));
    expect(parsePreviousEncryptionKey(Buffer.alloc(32, 3).toString('base64'))).toEqual(Buffer.alloc(32, 3));
    const url = 'postgres://sandbox:old-pw@db.internal:5432/sandbox';
    expect(parsePreviousEncryptionKey(url)).toEqual((await resolveEncryptionKey({ databaseUrl: url })).key);
    expect(parsePreviousEncryptionKey(url.replace('postgres:', 'postgresql:'))).toEqual((await resolveEncryptionKey({ databaseUrl: url.replace('postgres:', 'postgresql:') })).key);
    for (const bad of ['a1'.repeat(31), 'mysql://u:secret-pw@h/d', ' postgres://u:secret-pw@h/d', 'secret-pw']) {
      let message = '';
      try {
        parsePreviousEncryptionKey(bad);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^SANDBOX_PREVIOUS_ENCRYPTION_KEY must be the key the secrets were sealed with/);
      expect(message).not.toContain('secret-pw');
    }
  });
});

describe('the encryption key', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'encryption-key-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads SANDBOX_ENCRYPTION_KEY as 64 hex digits or base64, and refuses anything else', () => {
    const key = Buffer.alloc(32, 0xa1);
    expect(parseEncryptionKey(HEX_KEY)).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64'))).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64url'))).toEqual(key);
    for (const bad of ['', 'a1'.repeat(31), Buffer.alloc(16).toString('base64'), 'not a key at all']) {
      expect(() => parseEncryptionKey(bad)).toThrow(/SANDBOX_ENCRYPTION_KEY must be 32 random bytes/);
    }
  });

  it('creates the file beside a data directory once, mode 0600, and reads it back after', async () => {
    const dataDir = join(dir, 'pglite');
    const first = await resolveEncryptionKey({ dataDir });
    const file = encryptionKeyFileOf(dataDir);
    expect(file).toBe(`${dataDir}.encryption-key`);
    expect(first.madeFile).toBe(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(parseEncryptionKey(await readFile(file, 'utf8'))).toEqual(first.key);
    expect(await resolveEncryptionKey({ dataDir: `${dataDir}/` })).toEqual({ key: first.key }); // read, not made
  });

  it('refuses a key file other users may read', async () => {
    const dataDir = join(dir, 'shared');
    await writeFile(encryptionKeyFileOf(dataDir), Buffer.alloc(32, 1).toString('base64'));
    await chmod(encryptionKeyFileOf(dataDir), 0o644);
    await expect(resolveEncryptionKey({ dataDir })).rejects.toThrow(/other users may read it \(mode 644\): chmod 600/);
  });

  it('refuses, at once and leaving nothing, a key file that is a named pipe, a directory or a symbolic link to nothing; follows one to a key file', async () => {
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', ['-m', '600', encryptionKeyFileOf(fifo)]).status).toBe(0); // read, it would wait for a writer forever
    await mkdir(encryptionKeyFileOf(join(dir, 'directory')), { mode: 0o700 });
    await symlink(join(dir, 'nowhere'), encryptionKeyFileOf(join(dir, 'dangling')));
    for (const [name, message] of [['fifo', 'is not a file'], ['directory', 'is not a file'], ['dangling', 'is a symbolic link to nothing']] as const) {
      const dataDir = join(dir, name);
      await expect(openStore({ dataDir }), name).rejects.toThrow(`${encryptionKeyFileOf(dataDir)} holds the encryption key and ${message}`);
      expect(existsSync(dataDir), name).toBe(false); // no data directory made
    }
    const target = join(dir, 'mounted-secret');
    await writeFile(target, Buffer.alloc(32, 5).toString('base64'), { mode: 0o600 });
    await symlink(target, encryptionKeyFileOf(join(dir, 'linked')));
    expect(await resolveEncryptionKey({ dataDir: join(dir, 'linked') })).toEqual({ key: Buffer.alloc(32, 5) });
  });

  it('refuses a bad key before the store opens anything (no data directory made)', async () => {
    const dataDir = join(dir, 'refused');
    await writeFile(encryptionKeyFileOf(dataDir), Buffer.alloc(32, 1).toString('base64'));
    await chmod(encryptionKeyFileOf(dataDir), 0o644);
    await expect(openStore({ dataDir })).rejects.toThrow(/other users may read it \(mode 644\)/);
    await expect(stat(dataDir)).rejects.toThrow(/ENOENT/); // PGlite would have made it (initdb)
    await expect(openStore({ encryptionKey: 'not-a-key' })).rejects.toThrow(/SANDBOX_ENCRYPTION_KEY must be 32 random bytes/);
  });

  it('prefers SANDBOX_ENCRYPTION_KEY, derives one from DATABASE_URL as written, and draws one for memory', async () => {
    const dataDir = join(dir, 'with-env-key');
    expect(await resolveEncryptionKey({ encryptionKey: HEX_KEY, dataDir, databaseUrl: 'postgres://x' })).toEqual({ key: parseEncryptionKey(HEX_KEY) });
    await expect(stat(encryptionKeyFileOf(dataDir))).rejects.toThrow(/ENOENT/);
    const url = 'postgres://sandbox:pw@db.internal:5432/sandbox';
    const derived = await resolveEncryptionKey({ databaseUrl: url });
    expect(derived.key).toHaveLength(32);
    expect(await resolveEncryptionKey({ databaseUrl: url })).toEqual(derived);
    expect(await resolveEncryptionKey({ databaseUrl: `${url}?sslmode=require` })).not.toEqual(derived);
    expect(await resolveEncryptionKey({})).not.toEqual(await resolveEncryptionKey({ dataDir: 'memory://' }));
  });
});

/** Every file below `dir`, read whole. */
async function filesBelow(dir: string): Promise<Buffer[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return Promise.all(entries.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath ?? e.path, e.name))));
}

describe('secrets in a PGlite data directory', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'secrets-at-rest-')), 'pglite');
  });
  afterAll(() => rm(join(dataDir, '..'), { recursive: true, force: true }));

  const start = (config: Record<string, unknown> = {}) => startTestServer({ config: { dataDir, apiSpec: PLATFORM_BUNDLE, ...config } });
  const tokenOf = async (server: TestServer) => (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token as string;
  const privateD = async (server: TestServer) => (await authenticationRepository(server.store).listSigningKeys(new Date(0))).find((k) => k.active)!.privateJwk!.d!;

  it('keeps the signing key and the notification password sealed, reads them back after a restart, and refuses another key', async () => {
    const first = await start();
    const token = await tokenOf(first);
    const patched = await first.http
      .patch('/dpy/web-checkout/v1/technical-configurations')
      .set('Authorization', `Bearer ${token}`)
      .send({ notification: { url: 'http://127.0.0.1:9/hook', user_credentials: { user: 'shop', password: PASSWORD } } });
    expect(patched.status).toBe(200);
    const d = await privateD(first);

    // Read the store directly: neither secret is there in clear, and the old columns are gone.
    const configurations = await first.store.query('SELECT * FROM web_checkout_configurations WHERE seller_id = $1', [DEMO_SELLER_ID]);
    expect(configurations.rows[0]).not.toHaveProperty('notification_password');
    expect(configurations.rows[0]!.sealed_notification_password).toMatch(/^v1\./);
    expect(JSON.stringify(configurations.rows)).not.toContain(PASSWORD);
    const keys = await first.store.query('SELECT * FROM signing_keys');
    expect(keys.rows).toEqual([expect.objectContaining({ active: true, sealed_private_jwk: expect.stringMatching(/^v1\./), retired_at: null })]);
    expect(keys.rows[0]).not.toHaveProperty('private_jwk');
    expect(JSON.stringify(keys.rows)).not.toContain(d);
    await first.close();

    // Nor anywhere in the data directory's files.
    for (const file of await filesBelow(dataDir)) {
      expect(file.includes(PASSWORD)).toBe(false);
      expect(file.includes(d)).toBe(false);
    }

    const second = await start();
    try {
      expect(await privateD(second)).toBe(d);
      expect((await webCheckoutRepository(second.store).findTechnicalConfiguration(DEMO_SELLER_ID))!.notificationPassword).toBe(PASSWORD);
      const jwks = (await second.http.get('/sandbox/v1/jwks')).body;
      const { payload } = await jwtVerify(token, async (header) => importJWK(jwks.keys.find((k: { kid: string }) => k.kid === header.kid), 'ES256'), { issuer: ISSUER });
      expect(payload.sub).toBe(DEMO.clientId);
    } finally {
      await second.close();
    }

    const otherKey = Buffer.alloc(32, 9).toString('base64');
    await expect(start({ encryptionKey: otherKey })).rejects.toThrow(/cannot be decrypted: this server does not have the encryption key it was sealed with. Set SANDBOX_ENCRYPTION_KEY/);
  });
});

describe.each(STORES)('migration 009 on %s: clear rows of earlier versions', (kind) => {
  it('seals the active signing key and every notification password, and drops the clear columns', async () => {
    const { store, close } = await storeBeforeMigration(kind, '009');
    try {
      await ensureDemoSeller(store, DEMO, createLogger('silent'));
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const publicJwk = { ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' };
      const kid = await calculateJwkThumbprint(publicJwk);
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
      await store.query('INSERT INTO signing_keys (kid, private_jwk, public_jwk, active) VALUES ($1, $2, $3, true)', [kid, JSON.stringify(privateJwk), JSON.stringify({ ...publicJwk, kid })]);
      await store.query(
        `INSERT INTO web_checkout_configurations (seller_id, primary_color, accent_color, type_face, notification_url, notification_authentication_type, notification_user, notification_password)
         VALUES ($1, '#0B3B8C', '#F5A623', 'Platform Micro Text', 'http://127.0.0.1:9/hook', 'user_credentials', 'shop', $2)`,
        [DEMO_SELLER_ID, PASSWORD],
      );

      expect(await migrate(store)).toEqual(['009', '010', '011', '012', '013']);

      const keys = await store.query('SELECT * FROM signing_keys');
      expect(keys.rows).toEqual([expect.objectContaining({ kid, sealed_private_jwk: expect.stringMatching(/^v1\./) })]);
      expect(JSON.stringify(keys.rows)).not.toContain(privateJwk.d!);
      const configurations = await store.query('SELECT * FROM web_checkout_configurations');
      expect(configurations.rows[0]).not.toHaveProperty('notification_password');
      expect(JSON.stringify(configurations.rows)).not.toContain(PASSWORD);

      // The same key signs on, and the password reads back.
      const loaded = await loadSigningKeys(authenticationRepository(store));
      expect(loaded.kid).toBe(kid);
      const { accessToken } = await accessTokens(loaded, ISSUER).issue({ clientId: 'c', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox' });
      expect((await jwtVerify(accessToken, publicKey)).payload.sub).toBe('c');
      expect((await webCheckoutRepository(store).findTechnicalConfiguration(DEMO_SELLER_ID))!.notificationPassword).toBe(PASSWORD);
    } finally {
      await close();
    }
  });
});
