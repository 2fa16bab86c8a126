// startSandbox's options and its `env`: an option wins over its variable, a variable applies when
// its option is not given, and a level pino does not know is refused by name.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox } from '../../server/index.ts';
import { freePort } from '../support/processes.ts';

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

it('refuses a log level pino does not have, naming the accepted ones', async () => {
  await expect(startSandbox({ logLevel: 'verbose' })).rejects.toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not verbose');
});
