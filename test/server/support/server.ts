// A reference server for tests: in-memory PGlite (or a given store), migrations, the demo seller,
// served on 127.0.0.1 only, with its logs captured so tests can read them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import request from 'supertest';
import { accessTokens } from '../../../server/authentication/access-tokens.ts';
import { loadSigningKeys } from '../../../server/authentication/keys.ts';
import { authenticationRepository } from '../../../server/authentication/repository.ts';
import { createApp, type AreaRoutes } from '../../../server/app.ts';
import { loadConfig, type Config } from '../../../server/config.ts';
import { createLogger } from '../../../server/http/logging.ts';
import { ensureDemoSeller } from '../../../server/sandbox/demo-seller.ts';
import { migrate } from '../../../server/store/migrate.ts';
import type { HostResolver } from '../../../server/http/public-addresses.ts';
import { type Store } from '../../../server/store/store.ts';
import { freshStore, openTestStore } from './stores.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** The joined bundle as the server reads it by default (JSON: parsed ~20× faster than the YAML). */
export const PLATFORM_JSON = `${ROOT}generated/platform.openapi.json`;

/** The authentication area's own bundle (`make generate` writes it; committed). */
export const AUTH_BUNDLE = `${ROOT}generated/authentication.openapi.yaml`;

export const DEMO = { clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret' };
/** The Authorization header of the reference-only /sandbox/v1 calls (the default admin token). */
export const ADMIN = 'Bearer sandbox-admin-token';
export const GATEWAY_SCOPE = 'digital-plataform:gateway-api';
export const ISSUER = 'http://localhost:8080';

/** Config for a test server; `apiSpec` is set by startTestServer unless given. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  // No rate limit unless a test asks for one: suites send bursts from one client on purpose.
  return { ...loadConfig({}), host: '127.0.0.1', port: 0, dataDir: undefined, logLevel: 'info', rateLimit: { limit: 0, windowMs: 1000 }, ...overrides };
}

/** Log lines as parsed JSON. */
export class CapturedLogs extends Writable {
  readonly lines: Array<Record<string, any>> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) this.lines.push(JSON.parse(line));
    done();
  }
  get text() {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
}

export interface TestServer {
  /** The Express app itself (its router stack, for the handler coverage test). */
  app: Express;
  store: Store;
  config: Config;
  logs: CapturedLogs;
  url: string;
  http: ReturnType<typeof request>;
  close(options?: { keepStore?: boolean }): Promise<void>;
}

export async function listenOnLoopback(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** `resolveHostName`: the resolver of notification URL host names (the system's unless given). */
export async function startTestServer(
  options: { config?: Partial<Config>; store?: Store; extraAreas?: AreaRoutes[]; resolveHostName?: HostResolver } = {},
): Promise<TestServer> {
  const config = testConfig({ apiSpec: PLATFORM_JSON, ...options.config });
  const logs = new CapturedLogs();
  const logger = createLogger(config.logLevel, logs);
  const store = options.store ?? (await openTestStore(config));
  await migrate(store);
  await ensureDemoSeller(store, config.demoClient, logger);
  const app = await createApp({ store, config, logger, resolveHostName: options.resolveHostName }, options.extraAreas);
  const { server, url } = await listenOnLoopback(app);
  return {
    app,
    store,
    config,
    logs,
    url,
    http: request(url),
    async close({ keepStore = false } = {}) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (!keepStore) await store.close();
    },
  };
}

/** A first-form token request body. */
export function tokenForm(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const form: Record<string, string | undefined> = {
    grant_type: 'client_credentials',
    client_id: DEMO.clientId,
    client_secret: DEMO.clientSecret,
    scope: GATEWAY_SCOPE,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined));
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** No error body may carry a stack trace or a source location. */
export function expectNoStackTrace(body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (/\bat .+\(.+:\d+:\d+\)|\.ts:\d+|node:internal|\bstack\b/i.test(text)) throw new Error(`Error body leaks a stack trace: ${text}`);
}

/** A token signed with the server's own key for any seller id (a non-GUID one, for guid_error). */
export async function mintToken(server: TestServer, sellerId: string): Promise<string> {
  const keys = await loadSigningKeys(authenticationRepository(server.store));
  const { accessToken } = await accessTokens(keys, ISSUER).issue({ clientId: 'minted-client', sellerId, country: 'BR', tenant: 'sandbox' });
  return accessToken;
}

/** A server on the joined bundle over a fresh store of the given kind (PGlite, or a PostgreSQL schema). */
export async function startPlatformServer(kind: 'pglite' | 'postgres'): Promise<TestServer> {
  return startTestServer({ store: await freshStore(kind) });
}
