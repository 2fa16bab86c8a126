// Everything the reference server reads from the environment, read once, here.
import { BlockList, isIP } from 'node:net';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { PACKAGE_ROOT } from './package-root.ts';
import { dataDirectoryOf } from './store/data-directory.ts';
import { isPostgresUrl, parsePreviousEncryptionKey } from './store/encryption-key.ts';

export interface Config {
  port: number;
  host: string;
  /** PGlite data directory; ignored when `databaseUrl` is set. Absent means in memory. */
  dataDir?: string;
  databaseUrl?: string;
  /** SANDBOX_ENCRYPTION_KEY: seals secrets at rest; absent, the rule of server/store/encryption-key.ts. */
  encryptionKey?: string;
  /**
   * SANDBOX_PREVIOUS_ENCRYPTION_KEY: the key secrets were sealed with before (or the DATABASE_URL it
   * was derived from); a start seals them again with the current key (server/store/secrets-at-rest-check.ts).
   */
  previousEncryptionKey?: string;
  /** `iss` of the access tokens, checked on every bearer call. */
  issuer: string;
  /** Guards the reference-only `/sandbox/v1` administration calls (default `sandbox-admin-token`, loopback only). */
  sandboxAdminToken: string;
  demoClient: { clientId: string; clientSecret: string };
  logLevel: string;
  /** The bundle the validator enforces, in both directions. */
  apiSpec: string;
  /** Requests per client in each window (0: no limit); the contract's 429 with Retry-After. */
  rateLimit: { limit: number; windowMs: number };
  /**
   * The reverse proxies whose `X-Forwarded-For` names the caller (Express's `trust proxy`): false
   * (none, the default: the caller is the connection's address), a number of hops, or addresses,
   * CIDR ranges and Express's names (`loopback`, `linklocal`, `uniquelocal`).
   */
  trustProxy?: false | number | string[];
  /** Wrong client secrets allowed per client id in each window before the token endpoints answer 429 (limit 0: off). */
  tokenFailedAttempts: { limit: number; windowMs: number };
  /** Slow clients: time allowed for the request headers, and for the whole request (Node answers 408). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** The HTML reference served at /docs (`make docs` writes it). */
  docsFile: string;
  /** Largest JSON or form body accepted, in bytes. */
  bodyLimit: number;
  /** Where customers reach this server's pages (the hosted checkout's `redirect_url`), no trailing slash. */
  publicBaseUrl: string;
  /** Whether notification URLs may point at loopback or private addresses (true for a local sandbox). */
  allowPrivateNotificationUrls: boolean;
  /** How often the notification delivery worker looks for due deliveries. */
  notificationPollIntervalMs: number;
  /** Delay before a notification's 2nd attempt (the contract's 30 s); later delays scale with it. */
  notificationRetryBaseMs: number;
  /**
   * NOTIFICATION_RETENTION_DAYS: notification deliveries that are over (delivered or abandoned) are
   * deleted with their attempts once their last news is this many days old; absent, kept for good.
   */
  notificationRetentionDays?: number;
  /** How often the billing worker looks for due installment charges on real time. */
  billingPollIntervalMs: number;
  /**
   * Contract validation of requests and responses (default on). Off only to measure what it costs
   * (`make bench`): without it the server no longer keeps the contract.
   */
  validation?: boolean;
}

/** Paths a user gives are relative to the directory the sandbox was started from. */
const fromCwd = (path: string) => resolve(process.cwd(), path);

/** The joined bundle of the contract package, wherever npm installed it. */
const CONTRACT_BUNDLE = () => createRequire(import.meta.url).resolve('@payment-platform/contract/platform.openapi.json');

/**
 * Every whole-number variable, one rule: decimal digits (spaces around them allowed); unset, empty
 * or blank is the default, as for every other variable. Anything else (`1e3`, `0x10`, `7.0`, `-1`)
 * is NaN, which the caller refuses by name, never read as another number. `Number('')` is 0: an
 * empty RATE_LIMIT_PER_SECOND or TOKEN_FAILED_ATTEMPTS_PER_MINUTE (a template's blank line) turned
 * the limit off, and an empty PORT listened on a random port.
 */
function wholeNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
}

/**
 * A refused number as its refusal quotes it: as written when short, otherwise only its length (it
 * may be a URL with its password, or a secret, given to the wrong variable or option).
 */
const quoted = (value: string | undefined) => (value !== undefined && value.length <= 16 && !/[@:]/.test(value) ? JSON.stringify(value) : `a value of ${value?.length ?? 0} characters`);

function milliseconds(name: string, value: string | undefined, fallback: number): number {
  const n = wholeNumber(value) ?? fallback;
  if (!(n >= 1)) throw new Error(`${name} must be a positive whole number of milliseconds, not ${quoted(value)}`);
  return n;
}

function port(value: string | undefined): number {
  const n = wholeNumber(value) ?? 8080;
  if (!(n >= 0 && n <= 65_535)) throw new Error(`PORT must be a port number from 0 to 65535 (0 picks a free one), not ${quoted(value)}`);
  return n;
}

/** `true`/`false` (any case, or 1/0); absent or empty means the default. */
function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, not ${value}`);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
/** The widest proxy ranges TRUST_PROXY takes (10.0.0.0/8 is the widest private IPv4 range). */
const MIN_IPV4_PREFIX = 8;
const MIN_IPV6_PREFIX = 32;
/** The most IPv4 addresses TRUST_PROXY's ranges may cover together, and the most entries it may name. */
const MAX_IPV4_COVERED = 2 * 2 ** 24;
const MAX_PROXY_ENTRIES = 64;

/**
 * TRUST_PROXY: unset (no proxy), a number of hops (1 to 10), or a comma-separated list of proxy
 * addresses, CIDR ranges and Express's names. `true` is refused: trusting every X-Forwarded-For
 * lets any caller choose the address its limits and throttles count.
 */
function trustProxy(value: string | undefined): false | number | string[] {
  if (value === undefined || value.trim() === '' || /^(false|0)$/i.test(value.trim())) return false;
  if (/^\d+$/.test(value.trim())) {
    const hops = Number(value.trim());
    if (hops > 10) throw new Error(`TRUST_PROXY must be at most 10 hops, not ${hops}`);
    return hops;
  }
  if (/^(true|yes|all|\*)$/i.test(value.trim())) {
    throw new Error('TRUST_PROXY=true would believe any X-Forwarded-For (a caller could choose the address its limits count): give the number of proxies in front of the sandbox, or their addresses (loopback, 10.0.0.0/8, ...)');
  }
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) throw new Error(`TRUST_PROXY names no proxy: ${JSON.stringify(value.slice(0, 64))}`);
  let ipv4Covered = 0;
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    // A zone id (`fe80::1%eth0`) is no proxy address: Express would trust the address on every interface.
    const family = address?.includes('%') ? 0 : isIP(address ?? '');
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!PROXY_NAMES.includes(entry) && (family === 0 || !prefixOk || rest.length > 0)) {
      throw new Error(`TRUST_PROXY must be a number of hops or a list of addresses, CIDR ranges or ${PROXY_NAMES.join(', ')}; ${JSON.stringify(entry.slice(0, 64))} is none of them`);
    }
    // A range that holds much of the Internet trusts nearly any caller, as `true` would; IPv4-mapped
    // IPv6 ranges are refused too, however spelt (Express matches IPv4 callers against them: name an
    // IPv4 proxy as IPv4), and so are IPv6 ranges that hold them.
    const wide = prefix !== undefined && Number(prefix) < (family === 6 ? MIN_IPV6_PREFIX : MIN_IPV4_PREFIX);
    if (wide || (family === 6 && holdsIpv4Mapped(address!, prefix === undefined ? 128 : Number(prefix)))) {
      throw new Error(`TRUST_PROXY range ${JSON.stringify(entry)} is too wide or IPv4-mapped: name the proxies (IPv4 ranges of /${MIN_IPV4_PREFIX} or narrower, IPv6 of /${MIN_IPV6_PREFIX} or narrower)`);
    }
    if (family === 4) ipv4Covered += 2 ** (32 - (prefix === undefined ? 32 : Number(prefix)));
  }
  // Many narrow ranges can trust as much as one wide range would (all 256 /8s: every IPv4 caller).
  if (ipv4Covered > MAX_IPV4_COVERED || entries.length > MAX_PROXY_ENTRIES) {
    throw new Error(`TRUST_PROXY names too many proxies (at most ${MAX_PROXY_ENTRIES} entries, covering at most two /8 ranges of IPv4 together): name the proxies`);
  }
  return entries;
}

const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** Whether an IPv6 range starts inside ::ffff:0:0/96 (IPv4-mapped), or holds it. */
function holdsIpv4Mapped(address: string, prefix: number): boolean {
  const range = new BlockList();
  range.addSubnet(address, prefix, 'ipv6');
  return IPV4_MAPPED.check(address, 'ipv6') || range.check('::ffff:0:0', 'ipv6');
}

/** The most days NOTIFICATION_RETENTION_DAYS takes (ten years): past that, leave it unset. */
export const MAX_RETENTION_DAYS = 3650;

/** NOTIFICATION_RETENTION_DAYS: unset, empty or 0 keeps everything; otherwise whole days, 1 to MAX_RETENTION_DAYS. */
function retentionDays(value: string | undefined): number | undefined {
  const n = wholeNumber(value);
  if (n === undefined || n === 0) return undefined;
  if (!(n >= 1 && n <= MAX_RETENTION_DAYS)) {
    throw new Error(`NOTIFICATION_RETENTION_DAYS must be a whole number of days from 1 to ${MAX_RETENTION_DAYS} (0 or unset keeps every delivery), not ${quoted(value)}`);
  }
  return n;
}

function count(name: string, value: string | undefined, fallback: number): number {
  const n = wholeNumber(value) ?? fallback;
  if (!(n >= 0)) throw new Error(`${name} must be a whole number >= 0, not ${quoted(value)}`);
  return n;
}

/** pino's levels, and `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(value: string | undefined): string {
  const level = value || 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not ${value}`);
  return level;
}

/** The documented default of SANDBOX_DEMO_CLIENT_SECRET. */
export const DEFAULT_DEMO_CLIENT_SECRET = 'demo-seller-secret';

/** The documented default of SANDBOX_ADMIN_TOKEN: for a sandbox only this machine reaches. */
export const DEFAULT_SANDBOX_ADMIN_TOKEN = 'sandbox-admin-token';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The shortest admin token a sandbox that others can reach accepts (guessing it is then hopeless). */
export const MIN_EXPOSED_ADMIN_TOKEN_LENGTH = 16;

/** Whether listening on `host` keeps the server to this machine (127.0.0.0/8, ::1, localhost). */
export const isLoopback = (host: string) => host === 'localhost' || (isIP(host) !== 0 && LOOPBACK.check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4'));

/** Everything reachable beyond this machine needs an admin token of its own. */
function refuseExposedDefaults(config: Config): Config {
  if (!isLoopback(config.host) && config.sandboxAdminToken === DEFAULT_SANDBOX_ADMIN_TOKEN) {
    throw new Error(
      `Refusing to listen on ${config.host} with the documented default SANDBOX_ADMIN_TOKEN: anyone who can reach this ` +
        'address could create sellers and read their notifications. Set SANDBOX_ADMIN_TOKEN to a secret of your own, ' +
        'or listen on this machine only (HOST=127.0.0.1, the default).',
    );
  }
  if (!isLoopback(config.host) && config.sandboxAdminToken.length < MIN_EXPOSED_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `Refusing to listen on ${config.host} with a SANDBOX_ADMIN_TOKEN of ${config.sandboxAdminToken.length} characters: ` +
        `anyone who can reach this address could guess it. Give one of at least ${MIN_EXPOSED_ADMIN_TOKEN_LENGTH} random ` +
        'characters (openssl rand -hex 16), or listen on this machine only (HOST=127.0.0.1, the default).',
    );
  }
  return config;
}

/** Every variable the sandbox reads (server/README.md, "Variables"). */
export const VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'DATABASE_URL', 'SANDBOX_DEMO_CLIENT_ID', 'SANDBOX_DEMO_CLIENT_SECRET', 'SANDBOX_ADMIN_TOKEN',
  'ISSUER', 'PUBLIC_BASE_URL', 'LOG_LEVEL', 'TOKEN_FAILED_ATTEMPTS_PER_MINUTE', 'SANDBOX_ENCRYPTION_KEY', 'SANDBOX_PREVIOUS_ENCRYPTION_KEY', 'RATE_LIMIT_PER_SECOND',
  'SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS', 'NOTIFICATION_POLL_INTERVAL_MS', 'NOTIFICATION_RETRY_BASE_MS', 'NOTIFICATION_RETENTION_DAYS', 'BILLING_POLL_INTERVAL_MS',
  'HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS', 'CONTRACT_VALIDATION', 'API_SPEC', 'DOCS_FILE', 'TRUST_PROXY',
] as const;

/** A PostgreSQL URL, or a refusal that names the variable (and never quotes the URL: it may hold a password). */
function databaseUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  // As written, no space around it: the driver reads `  postgres://…` as a database name on another host.
  let parsed = false;
  try {
    parsed = isPostgresUrl(value) && new URL(value).protocol.startsWith('postgres');
  } catch {
    parsed = false;
  }
  if (parsed) return value;
  throw new Error('DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:5432/database), written without spaces; this one is not');
}

/** SANDBOX_PREVIOUS_ENCRYPTION_KEY as given, once checked (encryption-key.ts: refused by name, never quoted). */
function previousEncryptionKey(value: string | undefined): string | undefined {
  if (!value) return undefined;
  parsePreviousEncryptionKey(value);
  return value;
}

/**
 * HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS. The headers are part of the request: Node refuses a
 * headers timeout longer than the request's (a RangeError at start), so an unset HEADERS_TIMEOUT_MS
 * follows a REQUEST_TIMEOUT_MS shorter than its 10 s, and a longer one given is refused by name.
 */
function slowClientTimeouts(env: NodeJS.ProcessEnv): Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs'> {
  const requestTimeoutMs = milliseconds('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 30_000);
  const headersTimeoutMs = milliseconds('HEADERS_TIMEOUT_MS', env.HEADERS_TIMEOUT_MS, Math.min(10_000, requestTimeoutMs));
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request`);
  }
  return { headersTimeoutMs, requestTimeoutMs };
}

/**
 * A key of one's own given as the previous key, while the current one would be derived from
 * DATABASE_URL (SANDBOX_ENCRYPTION_KEY unset, or empty in a template): the secrets would be sealed
 * again with a key anyone who knows the URL can derive.
 */
function refuseWeakerKey(config: Config): Config {
  if (config.previousEncryptionKey && config.databaseUrl && !config.encryptionKey && !isPostgresUrl(config.previousEncryptionKey)) {
    throw new Error(
      'SANDBOX_PREVIOUS_ENCRYPTION_KEY is a key of its own, but SANDBOX_ENCRYPTION_KEY is not set: the secrets would be sealed again with the key derived from DATABASE_URL, which anyone who knows the URL can derive. Set SANDBOX_ENCRYPTION_KEY to the new key',
    );
  }
  return config;
}

/**
 * A refused setting's message in the caller's words: when the variable it starts with (`PORT must
 * be ...`) was set from an option (`--port`, startSandbox's `port`), it names the option instead.
 */
export function namingOption(error: unknown, optionOf: Partial<Record<string, string>>): Error | undefined {
  const message = (error as Error)?.message ?? '';
  const variable = /^([A-Z][A-Z_]*) /.exec(message)?.[1];
  const option = variable ? optionOf[variable] : undefined;
  if (!option) return undefined;
  // `DATA_DIR (--data-dir) must be ...`: the command's option named after the variable goes with it.
  return new Error(`${option}${message.slice(variable!.length).replace(/^ \(--[a-z-]+\)/, '')}`);
}

/**
 * The host of PUBLIC_BASE_URL's default: `localhost`, which a browser treats as this machine, when
 * the sandbox listens there or everywhere (127.0.0.1, 0.0.0.0, `::` however spelt), or on an IPv6
 * address with a zone, which no URL carries; else the one address it listens on (`[::1]`,
 * `127.0.0.2`, a LAN address), where `localhost` would not reach its pages.
 */
function defaultPublicHost(host: string): string {
  if (host === 'localhost' || host === '127.0.0.1' || host === '0.0.0.0') return 'localhost';
  if (isIP(host) !== 6) return host;
  // A zone (`fe80::1%eth0`) has no place in a URL; any spelling of `::` is every address.
  if (host.includes('%')) return 'localhost';
  const literal = new URL(`http://[${host}]`).hostname; // canonical: [::], [::1]
  return literal === '[::]' ? 'localhost' : literal;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // This machine only, by default; another address needs SANDBOX_ADMIN_TOKEN set (refuseExposedDefaults).
  const host = env.HOST || '127.0.0.1';
  return refuseWeakerKey(refuseExposedDefaults({
    port: port(env.PORT),
    host,
    // `memory://` keeps PGlite in memory (nothing survives a restart); any other URL is refused.
    dataDir: dataDirectoryOf(env.DATA_DIR || '.data/pglite', process.cwd()),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    encryptionKey: env.SANDBOX_ENCRYPTION_KEY || undefined,
    previousEncryptionKey: previousEncryptionKey(env.SANDBOX_PREVIOUS_ENCRYPTION_KEY),
    issuer: env.ISSUER || 'http://localhost:8080',
    // A documented default so that a local sandbox works out of the box; set your own when shared.
    sandboxAdminToken: env.SANDBOX_ADMIN_TOKEN || DEFAULT_SANDBOX_ADMIN_TOKEN,
    demoClient: {
      clientId: env.SANDBOX_DEMO_CLIENT_ID || 'demo-seller-client',
      clientSecret: env.SANDBOX_DEMO_CLIENT_SECRET || DEFAULT_DEMO_CLIENT_SECRET,
    },
    logLevel: logLevel(env.LOG_LEVEL),
    apiSpec: env.API_SPEC ? fromCwd(env.API_SPEC) : CONTRACT_BUNDLE(),
    rateLimit: { limit: count('RATE_LIMIT_PER_SECOND', env.RATE_LIMIT_PER_SECOND, 200), windowMs: 1000 },
    trustProxy: trustProxy(env.TRUST_PROXY),
    tokenFailedAttempts: { limit: count('TOKEN_FAILED_ATTEMPTS_PER_MINUTE', env.TOKEN_FAILED_ATTEMPTS_PER_MINUTE, 10), windowMs: 60_000 },
    ...slowClientTimeouts(env),
    // `make docs` renders the HTML reference into the sandbox package (server/docs/), which ships it.
    docsFile: env.DOCS_FILE ? fromCwd(env.DOCS_FILE) : resolve(PACKAGE_ROOT, 'docs/index.html'),
    bodyLimit: 1024 * 1024,
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://${defaultPublicHost(host)}:${port(env.PORT)}`).replace(/\/+$/, ''),
    // A sandbox on this machine only notifies the merchant's receivers on it (localhost); one that
    // others can reach sends nothing to private addresses unless told to (its sellers could otherwise
    // make it POST to anything on its network).
    allowPrivateNotificationUrls: flag('SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS', env.SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS, isLoopback(host)),
    billingPollIntervalMs: milliseconds('BILLING_POLL_INTERVAL_MS', env.BILLING_POLL_INTERVAL_MS, 60_000),
    notificationPollIntervalMs: milliseconds('NOTIFICATION_POLL_INTERVAL_MS', env.NOTIFICATION_POLL_INTERVAL_MS, 500),
    // The contract's 30 s; tests set a few milliseconds to see retries happen.
    notificationRetryBaseMs: milliseconds('NOTIFICATION_RETRY_BASE_MS', env.NOTIFICATION_RETRY_BASE_MS, 30_000),
    notificationRetentionDays: retentionDays(env.NOTIFICATION_RETENTION_DAYS),
    validation: flag('CONTRACT_VALIDATION', env.CONTRACT_VALIDATION, true),
  }));
}
