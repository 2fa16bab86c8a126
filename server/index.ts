// @payment-platform/sandbox for test suites: one sandbox per test file, reset per test.
//
//   const sandbox = await startSandbox();            // 127.0.0.1, a free port, in memory
//   afterEach(() => sandbox.reset());
//   afterAll(() => sandbox.close());
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './http/contract.ts';
import { loadConfig } from './config.ts';
import { createLogger } from './http/logging.ts';
import { DEMO_SELLER_ID } from './sandbox/demo-seller.ts';
import { runSandbox } from './sandbox-server.ts';
import { IN_MEMORY } from './store/data-directory.ts';

/** The reference-only sandbox area's paths: sellers, plans, payment links, test clocks, notifications. */
export type SandboxPaths = { [P in keyof paths as P extends `/sandbox/${string}` ? P : never]: paths[P] };

export interface StartSandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** 127.0.0.1 by default. */
  host?: string;
  /** `memory` (the default): nothing on disk, a fresh sandbox; `disk`: PGlite in `dataDir`. */
  storage?: 'memory' | 'disk';
  /**
   * PGlite data directory (default `.data/pglite` under the current directory); given alone, it means
   * `storage: 'disk'`. One sandbox at a time per directory: a second is refused until the first closes.
   * Its lock is renewed on timers: with the process's `setTimeout` faked (`vi.useFakeTimers()`) for
   * more than 8 s, the sandbox gives the lock up and its store refuses every call (in memory, nothing to renew).
   */
  dataDir?: string;
  /** A PostgreSQL server instead of PGlite (`storage` is then ignored). */
  databaseUrl?: string;
  /** pino level of the sandbox's JSON logs on stdout; `silent` (the default) writes none. */
  logLevel?: string;
  /**
   * Any other documented variable (`SANDBOX_ADMIN_TOKEN`, `NOTIFICATION_RETRY_BASE_MS`, ...), as
   * strings. The process environment is not read: a suite's sandbox is what it says here. An
   * option above wins over its variable here (`port` over `PORT`, `storage` and `dataDir` over
   * `DATA_DIR`, `databaseUrl` over `DATABASE_URL`, `logLevel` over `LOG_LEVEL`); a variable applies
   * when its option is not given.
   */
  env?: Record<string, string>;
}

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
  /** Back to the fresh state: the demo seller kept, every other object gone. */
  reset(): Promise<void>;
  /** Stops the sandbox and frees its port and storage. */
  close(): Promise<void>;
}

/**
 * Where the sandbox keeps its data: the options first (`dataDir` alone means `disk`), then `env`,
 * then memory. `disk` is on disk: a `memory://` DATA_DIR in `env` does not make it memory.
 */
function storageOf(options: StartSandboxOptions, env: Record<string, string>): Record<string, string> {
  if (options.databaseUrl) return { DATABASE_URL: options.databaseUrl };
  const storage = options.storage ?? (options.dataDir !== undefined ? 'disk' : undefined);
  const envDir = env.DATA_DIR || undefined;
  if (storage === 'disk') return { DATA_DIR: options.dataDir ?? (envDir?.startsWith(IN_MEMORY) ? undefined : envDir) ?? '.data/pglite', DATABASE_URL: '' };
  if (storage === 'memory') return { DATA_DIR: IN_MEMORY, DATABASE_URL: '' };
  return { DATA_DIR: envDir ?? IN_MEMORY };
}

export async function startSandbox(options: StartSandboxOptions = {}): Promise<Sandbox> {
  const env = options.env ?? {};
  const config = loadConfig({
    ...env,
    // An empty variable is an absent one, as the command reads them.
    PORT: options.port !== undefined ? String(options.port) : env.PORT || '0',
    HOST: options.host ?? (env.HOST || '127.0.0.1'),
    LOG_LEVEL: options.logLevel ?? (env.LOG_LEVEL || 'silent'),
    ...storageOf(options, env),
  });
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
