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
}

const PACKAGE_ROOT = new URL('..', import.meta.url).pathname;
/** Relative paths are relative to the package, so `make run` works from any directory. */
const fromPackage = (path: string) => (isAbsolute(path) ? path : resolve(PACKAGE_ROOT, path));

function port(value: string | undefined): number {
  const n = Number(value ?? 8080);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new Error(`PORT must be a port number, not ${value}`);
  return n;
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
  };
}
