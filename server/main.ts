// Starts the reference sandbox: config → store → migrations → demo seller → listen. Stops cleanly on
// SIGTERM/SIGINT: no new connections, in-flight requests finish, the store closes, exit 0.
//
// Independent start-up work overlaps: the store opens and migrates (PGlite compiles its
// WebAssembly off the main thread) while the application's modules load, and the check of the demo
// client's secret (scrypt, on libuv's thread pool) runs while the app parses the contract. Nothing
// listens before all of it is done.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './config.ts';
import { createLogger } from './http/logging.ts';
import { migrate } from './store/migrate.ts';
import { openStore } from './store/store.ts';

const SHUTDOWN_GRACE_MS = 10_000;

/** A setting the server refuses (a bad PORT, the default admin token beyond loopback) is a message, not a stack trace. */
function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel);
const storeReady = openStore(config).then(async (store) => {
  const applied = await migrate(store);
  if (applied.length) logger.info({ applied }, 'Migrations applied');
  return store;
});
const [store, { createApp }, { seedDemoSeller }, { notificationDeliveryWorker }, { createBillingWorker }] = await Promise.all([
  storeReady,
  import('./app.ts'),
  import('./sandbox/demo-seller.ts'),
  import('./checkout/notification-delivery.ts'),
  import('./subscription/billing-worker.ts'),
]);
const { secretChecked } = await seedDemoSeller(store, config.demoClient, logger);
const [app] = await Promise.all([createApp({ store, config, logger }), secretChecked]);
// Merchant notifications: pending deliveries (also those left by a previous run) go out once listening.
const deliveryWorker = notificationDeliveryWorker({ store, logger, config });
// Subscriptions bill on real time (those on a sandbox test clock bill when their clock is advanced).
const billing = createBillingWorker({ store, logger, pollIntervalMs: config.billingPollIntervalMs });
billing.start();

// Slow clients are timed out (Node answers 408 and closes): headers must arrive within
// headersTimeoutMs and the whole request within requestTimeoutMs, checked every second.
const server = createServer(
  { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000 },
  app,
);
server.on('error', (error) => {
  logger.fatal({ err: error }, `Cannot listen on ${config.host}:${config.port}`);
  void store.close().finally(() => process.exit(1));
});
server.listen(config.port, config.host, () => {
  deliveryWorker.start();
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${host}:${port}`;
  const { clientId, clientSecret } = config.demoClient;
  process.stdout.write(
    [
      '',
      `Payment platform reference sandbox listening on ${url}`,
      `  storage:     ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite ${config.dataDir ?? 'in memory'}`}`,
      `  demo client: ${clientId} / ${clientSecret}`,
      '',
      'Get an access token:',
      `  curl -s ${url}/authentication/oauth2/-core/access_token \\`,
      `    -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret} \\`,
      '    -d scope=digital-plataform:gateway-api',
      '',
    ].join('\n') + '\n',
  );
});

let stopping = false;
function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'Shutting down: finishing in-flight requests');
  // Connections still busy after the grace period are cut, so the process always ends.
  setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  const billingStopped = billing.stop(); // no new tick; the charge in progress commits (or rolls back whole)
  server.close(async () => {
    await billingStopped;
    await deliveryWorker.stop(); // the attempt in flight is recorded before the store closes
    await store.close();
    logger.info('Stopped');
    process.exit(0);
  });
  // Keep-alive connections become idle when their request finishes: close them then, not after the
  // keep-alive timeout.
  setInterval(() => server.closeIdleConnections(), 50).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
