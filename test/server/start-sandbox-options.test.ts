// startSandbox's options and its `env`: an option wins over its variable, a variable applies when
// its option is not given, and a level pino does not know is refused by name.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type StartSandboxOptions } from '../../server/index.ts';
import { freePort } from '../support/processes.ts';
import { contractExample } from './support/web-checkout.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-options-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it('listens on the port option, not on env.PORT; on env.PORT when no option is given', async () => {
  const [option, variable] = [await freePort(), await freePort()];
  const sandbox = await startSandbox({ port: option, env: { PORT: String(variable) } });
  try {
    expect(sandbox.url).toBe(`http://127.0.0.1:${option}`);
    expect((await fetch(`${sandbox.url}/sandbox/v1/jwks`)).status).toBe(200);
  } finally {
    await sandbox.close();
  }
  const fromEnv = await startSandbox({ env: { PORT: String(variable) } });
  try {
    expect(fromEnv.url).toBe(`http://127.0.0.1:${variable}`);
  } finally {
    await fromEnv.close();
  }
});

it("keeps nothing on disk with storage 'memory', whatever env.DATA_DIR says", async () => {
  const dataDir = join(dir, 'memory-not-here');
  const sandbox = await startSandbox({ storage: 'memory', env: { DATA_DIR: dataDir } });
  try {
    const token = await fetch(`${sandbox.url}/authentication/oauth2/-core/access_token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: sandbox.seller.clientId, client_secret: sandbox.seller.clientSecret, scope: 'digital-plataform:gateway-api' }),
    });
    expect(token.status).toBe(200);
  } finally {
    await sandbox.close();
  }
  expect(existsSync(dataDir)).toBe(false);
  expect(await readdir(dir)).toEqual([]);
});

it('keeps its data in dataDir when given alone (disk), over env.DATA_DIR; storage disk is never memory', async () => {
  const [given, fromEnv, onDisk] = ['given', 'from-env', 'on-disk'].map((name) => join(dir, name));
  for (const options of [{ dataDir: given!, env: { DATA_DIR: fromEnv! } }, { storage: 'disk' as const, dataDir: onDisk!, env: { DATA_DIR: 'memory://' } }]) {
    const sandbox = await startSandbox(options);
    await sandbox.close();
  }
  expect(existsSync(join(given!, 'PG_VERSION'))).toBe(true);
  expect(existsSync(join(onDisk!, 'PG_VERSION'))).toBe(true);
  expect(existsSync(fromEnv!)).toBe(false);
  await rm(given!, { recursive: true, force: true });
  await rm(onDisk!, { recursive: true, force: true });
  await Promise.all(['given', 'on-disk'].map((name) => rm(join(dir, `${name}.encryption-key`), { force: true })));
});

it('refuses a log level pino does not have, naming the accepted ones and the option or variable it came from', async () => {
  const option = await startSandbox({ logLevel: 'verbose' }).catch((error: unknown) => error);
  expect(option).toBeInstanceOf(TypeError);
  expect((option as Error).message).toBe('logLevel must be one of fatal, error, warn, info, debug, trace, silent, not verbose');
  await expect(startSandbox({ env: { LOG_LEVEL: 'verbose' } })).rejects.toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not verbose');
});

it("names dataDir, not the command's --data-dir, when the directory it was given is refused", async () => {
  const refused = await startSandbox({ dataDir: 'file:///x' }).catch((error: unknown) => error);
  expect((refused as Error).message).toBe('dataDir must be a directory, or memory:// to keep nothing on disk; got "file:///x"');
});

it('refuses options a JavaScript caller got wrong, naming the option, before anything starts', async () => {
  const refusals: Array<[unknown, string]> = [
    [null, 'startSandbox takes an options object, not null'],
    ['memory', 'startSandbox takes an options object, not string'],
    [{ prot: 1234 }, 'startSandbox has no option "prot" (did you mean port?); its options are port, host, storage, dataDir, databaseUrl, logLevel, env'],
    [{ datadir: '/tmp/x' }, 'startSandbox has no option "datadir" (did you mean dataDir?)'],
    [{ port: -1 }, 'port must be a whole number from 0 to 65535 (0 picks a free one), not -1'],
    [{ port: true }, 'port must be a whole number from 0 to 65535 (0 picks a free one), not true'],
    [{ port: '8080' }, 'port must be a whole number from 0 to 65535 (0 picks a free one), not "8080"'],
    [{ host: 123 }, 'host must be a non-empty string, not 123'],
    [{ dataDir: 42 }, 'dataDir must be a non-empty string, not 42'],
    [{ databaseUrl: 5 }, 'databaseUrl must be a non-empty string, not a number'],
    [{ storage: 'redis', dataDir: join(dir, 'never') }, `storage must be 'memory' or 'disk', not "redis"`],
    [{ storage: 'Disk' }, `storage must be 'memory' or 'disk', not "Disk"`],
    [{ storage: 'memory', dataDir: join(dir, 'never') }, "storage 'memory' keeps nothing on disk"],
    [{ env: 'PORT=1' }, 'env must be an object of variables and their values, as strings'],
    [{ env: { NOTIFICATION_RETRY_BASE: '1000' } }, 'env.NOTIFICATION_RETRY_BASE is not a variable of the sandbox (did you mean NOTIFICATION_RETRY_BASE_MS?)'],
    [{ env: { log_level: 'info' } }, 'env.log_level is not a variable of the sandbox (did you mean LOG_LEVEL?)'],
    [{ env: { PORT: 8080 } }, 'env.PORT must be a string, not a number'],
  ];
  for (const [options, message] of refusals) {
    const failure = await startSandbox(options as never).then(
      async (sandbox) => (await sandbox.close(), undefined),
      (error: unknown) => error,
    );
    expect(failure, JSON.stringify(options)).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toContain(message);
  }
  expect(await readdir(dir)).toEqual([]);
});

it('types env with the documented variables: a misspelt one in TypeScript does not compile, an undefined one is as not given', async () => {
  // @ts-expect-error: not a variable of the sandbox (unused if env were typed Record<string, string>)
  const misspelt: StartSandboxOptions = { env: { NOTIFICATION_RETRY_BASE: '1000' } };
  expect(misspelt.env).toBeDefined();
  const optional: string | undefined = undefined; // a spread of optional settings
  const sandbox = await startSandbox({ env: { SANDBOX_ADMIN_TOKEN: optional, NOTIFICATION_RETRY_BASE_MS: '250' } });
  try {
    expect(sandbox.adminToken).toBe('sandbox-admin-token');
  } finally {
    await sandbox.close();
  }
});

it('refuses a databaseUrl that is not a PostgreSQL URL as written, without quoting any of it (it may hold a password)', async () => {
  for (const url of ['mysql://root:hunter2@x/db', 'not a url', '  postgres://u:hunter2@h/db', 'postgres:hunter2', 'alice:hunter2@db.internal:5432/app']) {
    const failure = await startSandbox({ databaseUrl: url }).then(
      async (sandbox) => (await sandbox.close(), undefined),
      (error: unknown) => error as Error,
    );
    expect(failure, url).toBeInstanceOf(TypeError);
    expect(failure?.message, url).toBe('databaseUrl must be a PostgreSQL URL (postgres://user:password@host:5432/database), written without spaces; this one is not');
  }
  // The same URL in `env` names the variable.
  await expect(startSandbox({ env: { DATABASE_URL: 'mysql://root:hunter2@x/db' } })).rejects.toThrow(/^DATABASE_URL must be a PostgreSQL URL/);
});

it('names the kind of a wrong value that may hold a secret, never the value', async () => {
  const refusals: Array<[unknown, string]> = [
    [{ databaseUrl: new URL('postgres://app:hunter2@db.internal/app') }, 'databaseUrl must be a non-empty string, not an object (URL)'],
    [{ env: { DATABASE_URL: new URL('postgres://app:hunter2@db.internal/app') } }, 'env.DATABASE_URL must be a string, not an object (URL)'],
    [{ env: { SANDBOX_ENCRYPTION_KEY: Buffer.from('hunter2-hunter2-hunter2-hunter2!') } }, 'env.SANDBOX_ENCRYPTION_KEY must be a string, not an object (Buffer)'],
    [{ env: { SANDBOX_DEMO_CLIENT_SECRET: ['hunter2'] } }, 'env.SANDBOX_DEMO_CLIENT_SECRET must be a string, not an array'],
    [{ port: 8080n }, 'port must be a whole number from 0 to 65535 (0 picks a free one), not 8080'],
  ];
  for (const [options, message] of refusals) {
    const failure = await startSandbox(options as never).then(
      async (sandbox) => (await sandbox.close(), undefined),
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure?.message).toBe(message);
  }
});

it('names API_SPEC when the contract bundle it names cannot be read', async () => {
  await expect(startSandbox({ env: { API_SPEC: join(dir, 'nope.json') } })).rejects.toThrow(`API_SPEC: cannot read the contract bundle ${join(dir, 'nope.json')}: no such file`);
});

/** Whether this machine has IPv6's loopback (a container may have none). */
const hasIpv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = createServer().once('error', () => resolve(false));
  probe.listen(0, '::1', () => probe.close(() => resolve(true)));
});

it.skipIf(!hasIpv6Loopback)("gives payment intents a redirect_url on the address it listens on when that is one localhost does not reach (host '::1')", async () => {
  const sandbox = await startSandbox({ host: '::1' });
  try {
    expect(sandbox.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: sandbox.seller.clientId, client_secret: sandbox.seller.clientSecret, scope: 'digital-plataform:gateway-api' });
    const { access_token: token } = (await (await fetch(`${sandbox.url}/authentication/oauth2/-core/access_token`, { method: 'POST', body: form })).json()) as { access_token: string };
    const created = await fetch(`${sandbox.url}/dpy/web-checkout/v1/payment-intent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(contractExample('PaymentIntentRequestStandard')),
    });
    expect(created.status).toBe(201);
    const { redirect_url: page } = (await created.json()) as { redirect_url: string };
    expect(page.startsWith(`${sandbox.url}/checkout/`)).toBe(true);
    const shown = await fetch(page);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toBe('text/html; charset=utf-8');
  } finally {
    await sandbox.close();
  }
});
