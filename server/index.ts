// @payment-platform/sandbox for test suites: one sandbox per test file, reset per test.
//
//   const sandbox = await startSandbox();            // 127.0.0.1, a free port, in memory
//   afterEach(() => sandbox.reset());
//   afterAll(() => sandbox.close());
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './http/contract.ts';
import { loadConfig, namingOption, type Config } from './config.ts';
import { createLogger } from './http/logging.ts';
import { DEMO_SELLER_ID } from './sandbox/demo-seller.ts';
import { runSandbox } from './sandbox-server.ts';
import { IN_MEMORY } from './store/data-directory.ts';
import { checkOptions, type SandboxEnv, type SandboxVariable, type StartSandboxOptions } from './sandbox-options.ts';

export type { SandboxEnv, SandboxVariable, StartSandboxOptions };

/** The reference-only sandbox area's paths: sellers, plans, payment links, test clocks, notifications. */
export type SandboxPaths = { [P in keyof paths as P extends `/sandbox/${string}` ? P : never]: paths[P] };

export interface SandboxSeller {
  sellerId: string;
  clientId: string;
  clientSecret: string;
}

export interface Sandbox {
  /** Base URL of every area, the token endpoints and the hosted pages: `http://127.0.0.1:<port>`. */
  url: string;
  /** The demo seller and its client credentials (kept by `reset()`). */
  seller: SandboxSeller;
  /** The bearer token of the `/sandbox/v1` calls. */
  adminToken: string;
  /** A typed client (openapi-fetch) of the sandbox area, already carrying the admin token. */
  admin: Client<SandboxPaths>;
  /** Back to the fresh state: the demo seller kept, every other object gone, failed token attempts forgotten. Rejects after close(). */
  reset(): Promise<void>;
  /** Stops the sandbox (in-flight requests and a reset in flight finish) and frees its port and storage. */
  close(): Promise<void>;
}

/**
 * Where the sandbox keeps its data: the options first (`dataDir` alone means `disk`), then `env`,
 * then memory. `disk` is on disk: a `memory://` DATA_DIR in `env` does not make it memory.
 */
function storageOf(options: StartSandboxOptions, env: SandboxEnv): Record<string, string> {
  if (options.databaseUrl) return { DATABASE_URL: options.databaseUrl };
  const storage = options.storage ?? (options.dataDir !== undefined ? 'disk' : undefined);
  const envDir = env.DATA_DIR || undefined;
  if (storage === 'disk') return { DATA_DIR: options.dataDir ?? (envDir?.startsWith(IN_MEMORY) ? undefined : envDir) ?? '.data/pglite', DATABASE_URL: '' };
  if (storage === 'memory') return { DATA_DIR: IN_MEMORY, DATABASE_URL: '' };
  return { DATA_DIR: envDir ?? IN_MEMORY };
}

export async function startSandbox(given?: StartSandboxOptions): Promise<Sandbox> {
  const options = checkOptions(given);
  const env = options.env ?? {};
  let config: Config;
  try {
    config = loadConfig({
      ...env,
      // An empty variable is an absent one, as the command reads them.
      PORT: options.port !== undefined ? String(options.port) : env.PORT || '0',
      HOST: options.host ?? (env.HOST || '127.0.0.1'),
      LOG_LEVEL: options.logLevel ?? (env.LOG_LEVEL || 'silent'),
      ...storageOf(options, env),
    });
  } catch (error) {
    // A refused option is the caller's mistake in the caller's words (`logLevel must be ...`), a TypeError
    // as the other options' checks; a refused variable of `env` names the variable.
    const renamed = namingOption(error, { HOST: given?.host && 'host', LOG_LEVEL: given?.logLevel && 'logLevel', DATABASE_URL: given?.databaseUrl && 'databaseUrl', DATA_DIR: given?.dataDir && 'dataDir' });
    throw renamed ? new TypeError(renamed.message) : error;
  }
  const running = await runSandbox(config, createLogger(config.logLevel));
  const adminToken = config.sandboxAdminToken;
  // Made on first use: openapi-fetch's client loads Node's fetch (undici), ~35 ms of a first start
  // in a process that a suite calling the sandbox otherwise need not wait for.
  let admin: Client<SandboxPaths> | undefined;
  return {
    url: running.url,
    seller: { sellerId: DEMO_SELLER_ID, ...config.demoClient },
    adminToken,
    get admin() {
      return (admin ??= createClient<SandboxPaths>({ baseUrl: running.url, headers: { authorization: `Bearer ${adminToken}` } }));
    },
    reset: running.reset,
    close: running.close,
  };
}
