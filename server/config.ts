// Everything the reference server reads from the environment, read once, here.
import { isAbsolute, resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** PGlite data directory; ignored when `databaseUrl` is set. Absent means in memory. */
  dataDir?: string;
  databaseUrl?: string;
  /** `iss` of the access tokens, checked on every bearer call. */
  issuer: string;
  /** Guards the reference-only `/sandbox/v1` administration calls (default `sandbox-admin-token`). */
  sandboxAdminToken: string;
  demoClient: { clientId: string; clientSecret: string };
  logLevel: string;
  /** The bundle the validator enforces, in both directions. */
  apiSpec: string;
  /** The HTML reference served at /docs (`make docs` writes it). */
  docsFile: string;
  /** Largest JSON or form body accepted (body-parser syntax). */
  bodyLimit: string;
  /** Where customers reach this server's pages (the hosted checkout's `redirect_url`), no trailing slash. */
  publicBaseUrl: string;
  /** Whether notification URLs may point at loopback or private addresses (true for a local sandbox). */
  allowPrivateNotificationUrls: boolean;
}

const PACKAGE_ROOT = new URL('..', import.meta.url).pathname;
/** Relative paths are relative to the package, so `make run` works from any directory. */
const fromPackage = (path: string) => (isAbsolute(path) ? path : resolve(PACKAGE_ROOT, path));

function port(value: string | undefined): number {
  const n = Number(value ?? 8080);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new Error(`PORT must be a port number, not ${value}`);
  return n;
}

/** `true`/`false` (any case, or 1/0); absent or empty means the default. */
function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, not ${value}`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: port(env.PORT),
    host: env.HOST || '0.0.0.0',
    // `memory://` keeps PGlite in memory (nothing survives a restart).
    dataDir: env.DATA_DIR?.includes('://') ? env.DATA_DIR : fromPackage(env.DATA_DIR || '.data/pglite'),
    databaseUrl: env.DATABASE_URL || undefined,
    issuer: env.ISSUER || 'http://localhost:8080',
    // A documented default so that a local sandbox works out of the box; set your own when shared.
    sandboxAdminToken: env.SANDBOX_ADMIN_TOKEN || 'sandbox-admin-token',
    demoClient: {
      clientId: env.SANDBOX_DEMO_CLIENT_ID || 'demo-seller-client',
      clientSecret: env.SANDBOX_DEMO_CLIENT_SECRET || 'demo-seller-secret',
    },
    logLevel: env.LOG_LEVEL || 'info',
    apiSpec: fromPackage(env.API_SPEC || 'generated/platform.openapi.yaml'),
    docsFile: fromPackage(env.DOCS_FILE || 'dist/docs/index.html'),
    bodyLimit: '1mb',
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://localhost:${port(env.PORT)}`).replace(/\/+$/, ''),
    // The local sandbox's merchants often listen on localhost; a shared sandbox should set false.
    allowPrivateNotificationUrls: flag('SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS', env.SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS, true),
  };
}
