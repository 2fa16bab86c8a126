#!/usr/bin/env node
// The sandbox command (`npx @payment-platform/sandbox`, bin `payment-platform-sandbox`, and what
// `make run` starts): the documented variables, plus --port, --host, --data-dir and --database-url,
// which win over them. Prints where it listens and the credentials to use; stops cleanly on
// SIGTERM/SIGINT (exit 0).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DEMO_CLIENT_SECRET, DEFAULT_SANDBOX_ADMIN_TOKEN, loadConfig, namingOption, type Config } from './config.ts';
import { createLogger } from './http/logging.ts';
import { PACKAGE_ROOT } from './package-root.ts';
import { DEMO_SELLER_ID } from './sandbox/demo-seller.ts';
import { closest } from './sandbox-options.ts';
import { runSandbox, type RunningSandbox } from './sandbox-server.ts';

const HELP = `payment-platform-sandbox: the payment platform as a local sandbox (tokens, payment links,
hosted checkout with merchant webhooks, subscriptions billed on test clocks), validated against
the contract in both directions.

Usage: payment-platform-sandbox [options]

Options (each wins over its variable):
  --port <n>            where to listen (PORT, default 8080; 0 picks a free port)
  --host <address>      the address to listen on (HOST, default 127.0.0.1)
  --data-dir <path>     PGlite data directory (DATA_DIR, default .data/pglite under the current
                        directory; memory:// keeps nothing on disk)
  --database-url <url>  a PostgreSQL server instead of PGlite (DATABASE_URL)
  -v, --version         the package's version
  -h, --help            this text

Variables:
  SANDBOX_ADMIN_TOKEN                 bearer token of the /sandbox/v1 calls (default ${DEFAULT_SANDBOX_ADMIN_TOKEN};
                                      required, with a value of your own, to listen beyond loopback)
  SANDBOX_DEMO_CLIENT_ID, SANDBOX_DEMO_CLIENT_SECRET
                                      the demo seller's credentials (demo-seller-client / demo-seller-secret)
  SANDBOX_ENCRYPTION_KEY              key that encrypts signing keys and webhook passwords at rest
                                      (unset: derived from DATABASE_URL, else generated once into the
                                      0600 file <data dir>.encryption-key, else random in memory)
  SANDBOX_PREVIOUS_ENCRYPTION_KEY     the key secrets were sealed with before (or the DATABASE_URL it was
                                      derived from): they are sealed again with the current key at start
  SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS  whether webhooks may target private addresses (default: true on a loopback host only)
  ISSUER, PUBLIC_BASE_URL             the tokens' iss; the base of the hosted checkout's redirect_url
  LOG_LEVEL                           pino level (info)
  RATE_LIMIT_PER_SECOND               requests per client per second (200; 0 turns it off)
  TOKEN_FAILED_ATTEMPTS_PER_MINUTE    wrong secrets per client id and caller address before 429 (10; ten
                                      times as many from every address together)
  TRUST_PROXY                         the proxies whose X-Forwarded-For names the caller the limits count
                                      (a hop count, or addresses and ranges; unset: none)
  NOTIFICATION_RETENTION_DAYS         days after which delivered or abandoned webhooks are deleted (unset: kept)
  NOTIFICATION_POLL_INTERVAL_MS, NOTIFICATION_RETRY_BASE_MS, BILLING_POLL_INTERVAL_MS,
  HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, API_SPEC, DOCS_FILE, CONTRACT_VALIDATION
                                      see "Variables" in the README.md of @payment-platform/sandbox
`;

/** The environment with the command line's options applied over it. */
function environmentOf(argv: string[], env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; given: Partial<Record<string, string>> } | 'help' | 'version' {
  // `--port -1`: a value that starts with a dash is taken as one (parseArgs would call it ambiguous),
  // so that the setting's own check says what is wrong with it.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (VALUE_OPTIONS.includes(argv[i]!) && /^-\d/.test(argv[i + 1] ?? '')) args.push(`${argv[i]}=${argv[++i]}`);
    else args.push(argv[i]!);
  }
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  const withOptions = { ...env };
  const given: Partial<Record<string, string>> = {}; // the variables set from an option, by the option's name
  for (const [option, variable] of Object.entries(OPTION_VARIABLES)) {
    const value = values[option as keyof typeof OPTION_VARIABLES];
    if (value === undefined) continue;
    withOptions[variable] = value;
    given[variable] = `--${option}`;
  }
  return { env: withOptions, given };
}

/** The version in the sandbox package's package.json. */
const packageVersion = (): string => (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The options that take a value, and the variable each sets. */
const OPTION_VARIABLES = { port: 'PORT', host: 'HOST', 'data-dir': 'DATA_DIR', 'database-url': 'DATABASE_URL' } as const;
const VALUE_OPTIONS = Object.keys(OPTION_VARIABLES).map((option) => `--${option}`);

/** TRUST_PROXY as the banner says it. */
const proxiesOf = (trusted: number | string[]) => (typeof trusted === 'number' ? `the ${trusted} nearest hop${trusted === 1 ? '' : 's'}, whoever connects` : trusted.join(', '));

function banner(url: string, config: Config): string {
  // Documented defaults are shown; a secret of one's own is not (stdout often ends up in CI logs).
  const { clientId } = config.demoClient;
  const clientSecret = config.demoClient.clientSecret === DEFAULT_DEMO_CLIENT_SECRET ? DEFAULT_DEMO_CLIENT_SECRET : '$SANDBOX_DEMO_CLIENT_SECRET';
  const admin = config.sandboxAdminToken === DEFAULT_SANDBOX_ADMIN_TOKEN ? config.sandboxAdminToken : '(the value of SANDBOX_ADMIN_TOKEN)';
  return [
    '',
    `Payment platform reference sandbox listening on ${url}`,
    `  storage:      ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite ${config.dataDir ?? 'in memory'}`}`,
    `  demo seller:  ${DEMO_SELLER_ID}`,
    `  demo client:  ${clientId} / ${clientSecret}`,
    `  admin token:  ${admin}  (Authorization: Bearer ..., for /sandbox/v1)`,
    // A package packed without `make docs` (npm pack alone) has no HTML reference: not announced then.
    existsSync(config.docsFile) ? `  reference:    ${url}/docs` : '  reference:    none in this build (DOCS_FILE names no file; `make docs` in a clone writes it)',
    ...(config.trustProxy ? [`  proxies:      X-Forwarded-For believed from ${proxiesOf(config.trustProxy)} (TRUST_PROXY)`] : []),
    '',
    'Get an access token:',
    `  curl -s ${url}/authentication/oauth2/-core/access_token \\`,
    `    -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret} \\`,
    '    -d scope=digital-plataform:gateway-api',
    '',
  ].join('\n');
}

/** A setting the sandbox refuses (a bad option or PORT, the default admin token beyond loopback) is a message, not a stack trace. */
function configOrExit(): Config {
  let given: Partial<Record<string, string>> = {};
  try {
    const options = environmentOf(process.argv.slice(2), process.env);
    if (options === 'help' || options === 'version') {
      process.stdout.write(options === 'help' ? HELP : `@payment-platform/sandbox ${packageVersion()}\n`);
      process.exit(0);
    }
    given = options.given;
    return loadConfig(options.env);
  } catch (error) {
    process.stderr.write(`${(namingOption(error, given) ?? unknownOption(error) ?? (error as Error)).message}\nRun with --help for the options.\n`);
    process.exit(1);
  }
}

/** parseArgs's refusal of an option it does not know, with the option most likely meant (`--prot`: `--port`), as startSandbox says it. */
function unknownOption(error: unknown): Error | undefined {
  const given = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']*)'/.exec((error as Error).message)?.[1] : undefined;
  if (given === undefined) return undefined;
  const hint = closest(given.replace(/^-+/, ''), [...Object.keys(OPTION_VARIABLES), 'help']);
  return new Error(`Unknown option '${given}'${hint ? ` (did you mean --${hint}?)` : ''}`);
}

const config = configOrExit();
const logger = createLogger(config.logLevel);
// A start refused (the data directory in use or not usable, the port taken, the key file open to
// others) says why in one line, as a refused setting does; its stack goes to the log at debug.
// A store stopped for good (see RunOptions) makes every request fail: the command ends, with status
// 1, so that whoever runs it (a terminal, a process manager) sees it and starts it again.
// (Before the start is over, the start itself fails on the stopped store.)
let stopping: number | undefined; // when the stop began
let started: RunningSandbox | undefined;
let storeStopped = false;
const onStoreStopped = () => {
  storeStopped = true;
  if (started && stopping === undefined) shutdown('the store stopped', 1);
};
const sandbox = await runSandbox(config, logger, { onStoreStopped }).catch((error: Error) => {
  logger.debug({ err: error }, 'The start failed');
  process.stderr.write(`Cannot start the sandbox: ${error.message}\n`);
  process.exit(1);
});
started = sandbox;
if (storeStopped) shutdown('the store stopped', 1); // while the start was finishing
process.stdout.write(banner(sandbox.url, sandbox.config) + '\n');

// A stop lets requests finish (7 s at most) and closes the store; a store that does not answer
// (PostgreSQL stopped or partitioned) could hold it longer, so it ends by STOP_DEADLINE_MS whatever
// is left, and a second signal (a second Ctrl-C) ends it at once. Either exit is 1: not a clean stop.
const STOP_DEADLINE_MS = 20_000;
// A signal to a process group reaches this process once from its sender and again from each wrapper
// that passes it on (make, tsx): a repeat within SAME_SIGNAL_MS is that same signal, not a second one.
const SAME_SIGNAL_MS = 1_000;
function shutdown(signal: string, status = 0) {
  if (stopping !== undefined) {
    if (Date.now() - stopping < SAME_SIGNAL_MS) return;
    logger.warn({ signal }, 'Stopping at once: a second signal came before the stop was over');
    process.exit(1);
  }
  stopping = Date.now();
  logger.info({ signal }, 'Shutting down: finishing in-flight requests');
  // Should the process run out of things to wait on before the stop is over (a close() that can
  // never settle), it ends by itself, without "Stopped": no clean stop either, so its status is 1.
  process.exitCode = 1;
  setTimeout(() => {
    logger.error(`The stop did not end within ${STOP_DEADLINE_MS / 1000} s: exiting with what is left undone`);
    process.exit(1);
  }, STOP_DEADLINE_MS).unref();
  void sandbox.close().then(
    () => {
      logger.info('Stopped');
      process.exit(storeStopped ? 1 : status); // a store stopped for good during the stop too (a lock lost while requests finished)
    },
    (error: Error) => {
      logger.error({ err: error }, 'The stop failed');
      process.exit(1);
    },
  );
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
