// Changing the encryption key of the secrets at rest (SANDBOX_PREVIOUS_ENCRYPTION_KEY,
// server/store/secrets-at-rest-check.ts), as an operator does it through startSandbox: a sandbox refuses
// to start with a new key alone; given the old one too, it seals every secret again with the new one,
// and tokens signed before still verify; from then on the new key alone opens everything. On PGlite
// with explicit keys, and on PostgreSQL where the key was derived from a DATABASE_URL that changed
// (a rotated password, an added parameter).
import { mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { startSandbox, type Sandbox, type StartSandboxOptions } from '../../server/index.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { migrate } from '../../server/store/migrate.ts';
import { openStore } from '../../server/store/open-store.ts';
import type { Store } from '../../server/store/store.ts';
import { webCheckoutRepository } from '../../server/web-checkout/repository.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/http/logging.ts';
import { runSandbox } from '../../server/sandbox-server.ts';
import { notificationPasswordContext, sealedSecrets } from '../../server/store/sealed-secrets.ts';
import { DEFAULT_TECHNICAL_CONFIGURATION } from '../../server/web-checkout/technical-configuration.ts';
import { createDeliveryWorker } from '../../server/notifications/delivery.ts';
import { notificationTargetOf } from '../../server/notifications/delivery-worker.ts';
import { enqueueCheckoutNotification } from '../../server/notifications/outbox.ts';
import { notificationRepository } from '../../server/notifications/repository.ts';
import { deref, loadPlatform } from '../support/contract.ts';
import { configureCheckout, createIntent, cardForm } from './support/checkout.ts';
import { CapturedLogs, startTestServer, tokenForm } from './support/server.ts';
import { DATABASE_URL, freshPostgresSchemaUrl, openTestStore } from './support/stores.ts';

const PASSWORD = 'notification-password-sealed-at-rest';
const platform = loadPlatform();
const NOTIFICATION = deref(platform, platform.webhooks!['checkout-notification']!.post.requestBody.content['application/json'].examples.authorized_credit).value;
const [KEY_A, KEY_B] = [Buffer.alloc(32, 0xa1).toString('base64'), 'b2'.repeat(32)];
const WRONG_KEY = /cannot be decrypted: this server does not have the encryption key it was sealed with.+SANDBOX_PREVIOUS_ENCRYPTION_KEY/;

/** The data directories of the PGlite tests. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'key-change-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const tokenOf = async (sandbox: Sandbox) => {
  const answer = await fetch(`${sandbox.url}/authentication/oauth2/-core/access_token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: sandbox.seller.clientId, client_secret: sandbox.seller.clientSecret, scope: 'digital-plataform:gateway-api' }),
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
};
/** A bearer call that writes nothing. */
const sellers = (sandbox: Sandbox, token: string) => fetch(`${sandbox.url}/dpy/payment-link/v1/sellers`, { headers: { authorization: `Bearer ${token}` } });
/** Sets the demo seller's notification, with its password (sealed at rest), under a bearer token. */
const configure = (sandbox: Sandbox, token: string) =>
  fetch(`${sandbox.url}/dpy/web-checkout/v1/technical-configurations`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification: { url: 'http://127.0.0.1:9/hook', user_credentials: { user: 'shop', password: PASSWORD } } }),
  });
const kids = async (sandbox: Sandbox) => ((await (await fetch(`${sandbox.url}/sandbox/v1/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);

/** Every sealed value of the store: the signing keys' private halves, the notification passwords. */
async function sealedValues(store: Store): Promise<string[]> {
  const keys = await store.query<{ v: string }>('SELECT sealed_private_jwk AS v FROM signing_keys WHERE sealed_private_jwk IS NOT NULL');
  const passwords = await store.query<{ v: string }>('SELECT sealed_notification_password AS v FROM web_checkout_configurations WHERE sealed_notification_password IS NOT NULL');
  return [...keys.rows, ...passwords.rows].map((r) => r.v);
}

/**
 * The whole change on one store: `before` and `after` are the options of the sandbox with the old
 * key and with the new one; `previous` what SANDBOX_PREVIOUS_ENCRYPTION_KEY is given; `openAfter`
 * opens the store directly with the new key alone.
 */
async function changeKey(before: StartSandboxOptions, after: StartSandboxOptions, previous: string, openAfter: () => Promise<Store>) {
  const first = await startSandbox(before);
  const token = await tokenOf(first);
  expect((await configure(first, token)).status).toBe(200);
  const signing = await kids(first);
  await first.close();

  // The new key alone: refused at start, saying how to change it.
  await expect(startSandbox(after)).rejects.toThrow(WRONG_KEY);

  // With the old key as the previous one: it starts, and what was sealed before still works.
  const changing = await startSandbox({ ...after, env: { ...after.env, SANDBOX_PREVIOUS_ENCRYPTION_KEY: previous } });
  try {
    expect(await kids(changing)).toEqual(signing);
    expect((await sellers(changing, token)).status).toBe(200); // the token signed before the change
  } finally {
    await changing.close();
  }

  // Every secret opens with the new key alone now, unchanged.
  const store = await openAfter();
  try {
    expect(await sealedValues(store)).toHaveLength(2);
    expect((await webCheckoutRepository(store).findTechnicalConfiguration(DEMO_SELLER_ID))!.notificationPassword).toBe(PASSWORD);
    expect((await loadSigningKeys(authenticationRepository(store))).kid).toBe(signing[0]);
  } finally {
    await store.close();
  }

  // And the sandbox starts with the new key alone, signing with the same key; a start given the
  // previous key again seals nothing again (the values stay as they are).
  const later = await startSandbox(after);
  try {
    expect(await kids(later)).toEqual(signing);
    expect((await configure(later, await tokenOf(later))).status).toBe(200);
    expect((await sellers(later, token)).status).toBe(200); // the token signed before the change
  } finally {
    await later.close();
  }
  const opened = await openAfter();
  const sealedBefore = await sealedValues(opened).finally(() => opened.close());
  const again = await startSandbox({ ...after, env: { ...after.env, SANDBOX_PREVIOUS_ENCRYPTION_KEY: previous } });
  await again.close();
  const reread = await openAfter();
  try {
    expect(await sealedValues(reread)).toEqual(sealedBefore);
  } finally {
    await reread.close();
  }
}

describe('changing the encryption key of a PGlite data directory', () => {

  it('seals every secret again with the new key when the old one is given as SANDBOX_PREVIOUS_ENCRYPTION_KEY', async () => {
    const dataDir = join(dir, 'data');
    await changeKey(
      { dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_A } },
      { dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } },
      KEY_A,
      () => openStore({ dataDir, encryptionKey: KEY_B }),
    );
  });

  it('refuses to start when a secret opens with neither key, naming the row, not the keys', async () => {
    const dataDir = join(dir, 'neither');
    const first = await startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_A } });
    await first.close();
    const other = Buffer.alloc(32, 0xc3).toString('base64');
    const refused = startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_B, SANDBOX_PREVIOUS_ENCRYPTION_KEY: other } });
    await expect(refused).rejects.toThrow(/^A secret at rest \(signing_keys\.private_jwk:[\w-]+\) opens neither with the encryption key nor with SANDBOX_PREVIOUS_ENCRYPTION_KEY/);
    const message = await refused.catch((error: Error) => error.message);
    for (const key of [KEY_A, KEY_B, other]) expect(message).not.toContain(key);
    // Nothing was changed: the old key still opens it.
    const kept = await startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_A } });
    await kept.close();
  });

  it('refuses a data directory whose key file is missing, saying that the key file it made there must be replaced by the original, and starts once it is', async () => {
    const dataDir = join(dir, 'moved-key');
    const file = `${dataDir}.encryption-key`;
    const first = await startSandbox({ dataDir });
    const kid = await kids(first);
    await first.close();
    await rename(file, `${file}.moved`);
    const refused = startSandbox({ dataDir });
    await expect(refused).rejects.toThrow(WRONG_KEY);
    expect(await refused.catch((error: Error) => error.message)).toContain(
      `The key file ${file} was missing, and this start made a new one there, which opens nothing sealed before: put the original back in its place (replacing the new one), or give its key as SANDBOX_ENCRYPTION_KEY.`,
    );
    // The file it made is left (another start may have read it): it is another key, and opens nothing.
    expect(await readFile(file, 'utf8')).not.toBe(await readFile(`${file}.moved`, 'utf8'));
    await expect(startSandbox({ dataDir })).rejects.toThrow(WRONG_KEY); // not made by this start: no word of it
    await rename(`${file}.moved`, file);
    const again = await startSandbox({ dataDir });
    expect(await kids(again)).toEqual(kid);
    await again.close();
    // A new data directory keeps the key file its first start made, as before.
    const fresh = join(dir, 'fresh-key');
    await (await startSandbox({ dataDir: fresh })).close();
    expect((await stat(`${fresh}.encryption-key`)).mode & 0o777).toBe(0o600);
  });

  it('makes no key file when the lock refuses the start: the running sandbox, restarted, still opens its data', async () => {
    const dataDir = join(dir, 'key-under-lock');
    const file = `${dataDir}.encryption-key`;
    const running = await startSandbox({ dataDir });
    const kid = await kids(running);
    await rename(file, `${file}.moved`); // gone while the sandbox runs (moved, or deleted and restored later)
    await expect(startSandbox({ dataDir })).rejects.toThrow(/is in use by another sandbox/);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' }); // nothing made in its place
    await rename(`${file}.moved`, file);
    await running.close();
    const again = await startSandbox({ dataDir });
    expect(await kids(again)).toEqual(kid);
    await again.close();
  });
});

/** Stores the demo seller's notification password sealed with `key`, as an instance on that key would. */
async function writePasswordSealedWith(store: Store, key: Buffer): Promise<void> {
  const sealed = sealedSecrets(key).seal(PASSWORD, notificationPasswordContext(DEMO_SELLER_ID));
  const d = DEFAULT_TECHNICAL_CONFIGURATION;
  await store.query(
    `INSERT INTO web_checkout_configurations (seller_id, primary_color, accent_color, type_face, notification_url, notification_user, sealed_notification_password)
     VALUES ($1, $2, $3, $4, 'http://127.0.0.1:9/hook', 'shop', $5)
     ON CONFLICT (seller_id) DO UPDATE SET notification_url = excluded.notification_url, notification_user = excluded.notification_user, sealed_notification_password = excluded.sealed_notification_password`,
    [DEMO_SELLER_ID, d.primaryColor, d.accentColor, d.typeFace, sealed],
  );
}

describe('every secret at rest checked at start', () => {

  it('refuses a start when a notification password (not only the signing key) was sealed with another key, naming its row', async () => {
    const dataDir = join(dir, 'password');
    await (await startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } })).close();
    // An instance still on the old key wrote the password (a rollout, a restored table).
    const old = await openStore({ dataDir, encryptionKey: KEY_B });
    await writePasswordSealedWith(old, Buffer.from(KEY_A, 'base64'));
    await old.close();
    await expect(startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } })).rejects.toThrow(
      `A secret at rest (web_checkout_configurations.notification_password:${DEMO_SELLER_ID}) cannot be decrypted: this server does not have the encryption key it was sealed with`,
    );
    const changing = await startSandbox({ dataDir, env: { SANDBOX_ENCRYPTION_KEY: KEY_B, SANDBOX_PREVIOUS_ENCRYPTION_KEY: KEY_A } });
    await changing.close();
    const store = await openStore({ dataDir, encryptionKey: KEY_B });
    try {
      expect((await webCheckoutRepository(store).findTechnicalConfiguration(DEMO_SELLER_ID))!.notificationPassword).toBe(PASSWORD);
    } finally {
      await store.close();
    }
  });

  it('says, once per secret, when one written after the start opens only with the previous key (an instance still on the old key)', async () => {
    const logs = new CapturedLogs();
    const config = loadConfig({ PORT: '0', DATA_DIR: 'memory://', SANDBOX_ENCRYPTION_KEY: KEY_B, SANDBOX_PREVIOUS_ENCRYPTION_KEY: KEY_A, RATE_LIMIT_PER_SECOND: '0' });
    const running = await runSandbox(config, createLogger('info', logs));
    try {
      expect(logs.lines.filter((l) => l.resealed !== undefined)).toMatchObject([{ level: 30, resealed: 0, encryptionKey: 'SANDBOX_ENCRYPTION_KEY' }]);
      await writePasswordSealedWith(running.store, Buffer.from(KEY_A, 'base64'));
      const token = await (await fetch(`${running.url}/authentication/oauth2/-core/access_token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: config.demoClient.clientId, client_secret: config.demoClient.clientSecret, scope: 'digital-plataform:gateway-api' }),
      }).then((r) => r.json() as Promise<{ access_token: string }>)).access_token;
      // Reads of the password: a change of colours merges with it (and seals it with the current key).
      const patch = (body: object) =>
        fetch(`${running.url}/dpy/web-checkout/v1/technical-configurations`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await patch({ layout_customization: { color: { primary: '#112233' } } })).status).toBe(200);
      await writePasswordSealedWith(running.store, Buffer.from(KEY_A, 'base64')); // written by the old instance again
      expect((await patch({ layout_customization: { color: { primary: '#445566' } } })).status).toBe(200);
      const warnings = logs.lines.filter((l) => l.level === 40 && l.secret !== undefined);
      expect(warnings).toEqual([expect.objectContaining({ secret: `web_checkout_configurations.notification_password:${DEMO_SELLER_ID}` })]);
      expect(warnings[0]!.msg).toMatch(/^A secret at rest opened only with SANDBOX_PREVIOUS_ENCRYPTION_KEY after the start/);
      expect(JSON.stringify(logs.lines)).not.toContain(KEY_A);
      expect(JSON.stringify(logs.lines)).not.toContain(PASSWORD);
    } finally {
      await running.close();
    }
  });

  it("keeps the seller's hosted checkout, its payments and its own updates working while its password opens with neither key", async () => {
    const server = await startTestServer({ config: { encryptionKey: KEY_B } });
    try {
      const token = (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token as string;
      await configureCheckout(server, token, { url: 'http://127.0.0.1:9' });
      await writePasswordSealedWith(server.store, Buffer.alloc(32, 0xc3)); // a key this instance never had
      const intent = await createIntent(server, token);
      const page = await server.http.get(`/checkout/${intent.payment_intent_id}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('--primary:#6A1B9A'); // the seller's layout, read without the password
      const paid = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
      expect(paid.status).toBe(303);
      expect(paid.headers.location).toBe(`http://127.0.0.1:9/success?payment_intent_id=${intent.payment_intent_id}`);
      expect(await notificationRepository(server.store).listForSeller(DEMO_SELLER_ID)).toMatchObject([{ status: 'pending', payload: { payment_intent_id: intent.payment_intent_id } }]);

      // The seller's own updates: one that keeps the password keeps it as stored, one that sends a new one replaces it.
      const sealedNow = async () =>
        (await server.store.query<{ v: string }>('SELECT sealed_notification_password AS v FROM web_checkout_configurations WHERE seller_id = $1', [DEMO_SELLER_ID])).rows[0]!.v;
      const foreign = await sealedNow();
      const patch = (body: object) => server.http.patch('/dpy/web-checkout/v1/technical-configurations').set('Authorization', `Bearer ${token}`).send(body);
      const layoutOnly = await patch({ layout_customization: { color: { primary: '#123456' } } });
      expect(layoutOnly.status).toBe(200);
      expect(layoutOnly.body.layout_customization.color.primary).toBe('#123456');
      expect(await sealedNow()).toBe(foreign);
      const replaced = await patch({ notification: { user_credentials: { user: 'shop', password: 'a-new-password' } } });
      expect(replaced.status).toBe(200);
      expect(replaced.body.notification).toEqual({ url: 'http://127.0.0.1:9/hook', authentication_type: 'user_credentials', user_credentials: { user: 'shop' } });
      expect((await webCheckoutRepository(server.store).findTechnicalConfiguration(DEMO_SELLER_ID))!.notificationPassword).toBe('a-new-password');
    } finally {
      await server.close();
    }
  });

  it('records a failed attempt, then gives the delivery up, when a password opens with neither key (not tried forever)', async () => {
    const store = await openTestStore({ encryptionKey: KEY_B });
    try {
      await migrate(store);
      await ensureDemoSeller(store, { clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret' }, createLogger('silent'));
      await writePasswordSealedWith(store, Buffer.alloc(32, 0xc3)); // a key this instance never had
      const id = await store.transaction((tx) => enqueueCheckoutNotification(tx, DEMO_SELLER_ID, NOTIFICATION, new Date()));
      const worker = createDeliveryWorker({
        store,
        logger: createLogger('silent'),
        policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, attemptTimeoutMs: 1_000 },
        resolveTarget: notificationTargetOf(store, true),
      });
      expect(await worker.runOnce()).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await worker.runOnce()).toBe(1);
      expect(await notificationRepository(store).findById(id)).toMatchObject({ status: 'abandoned', attempts: 2 });
      const refused = "the seller's notification password cannot be decrypted with this sandbox's encryption key (another instance sealed it with another key)";
      expect(await notificationRepository(store).attemptsOf(id)).toMatchObject([
        { attempt: 1, url: null, status_code: null, error: refused },
        { attempt: 2, url: null, status_code: null, error: refused },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe.runIf(DATABASE_URL)('changing a DATABASE_URL the key was derived from (PostgreSQL)', () => {
  it('starts again after a lost key, once its secrets are forgotten as the README says', async () => {
    const url = await freshPostgresSchemaUrl();
    const first = await startSandbox({ databaseUrl: url, env: { SANDBOX_ENCRYPTION_KEY: KEY_A } });
    expect((await configure(first, await tokenOf(first))).status).toBe(200);
    await first.close();
    await expect(startSandbox({ databaseUrl: url, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } })).rejects.toThrow(/^A secret at rest \(signing_keys\./);
    const store = await openStore({ databaseUrl: url, encryptionKey: KEY_B });
    try {
      await store.query('DELETE FROM signing_keys');
      await expect(startSandbox({ databaseUrl: url, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } })).rejects.toThrow(
        `A secret at rest (web_checkout_configurations.notification_password:${DEMO_SELLER_ID})`,
      );
      await store.query(
        `UPDATE web_checkout_configurations SET notification_url = NULL, notification_authentication_type = NULL, notification_user = NULL, sealed_notification_password = NULL WHERE seller_id = $1`,
        [DEMO_SELLER_ID],
      );
    } finally {
      await store.close();
    }
    const again = await startSandbox({ databaseUrl: url, env: { SANDBOX_ENCRYPTION_KEY: KEY_B } });
    try {
      expect((await configure(again, await tokenOf(again))).status).toBe(200); // a new signing key; the seller sets its notification again
    } finally {
      await again.close();
    }
  });

  it('seals every secret again with the key of the new URL when the old URL is given as SANDBOX_PREVIOUS_ENCRYPTION_KEY', async () => {
    const url = await freshPostgresSchemaUrl();
    const changed = new URL(url);
    changed.searchParams.set('application_name', 'sandbox-after-rotation'); // the same database, another URL
    await changeKey({ databaseUrl: url }, { databaseUrl: changed.toString() }, url, () => openStore({ databaseUrl: changed.toString() }));
  });
});
