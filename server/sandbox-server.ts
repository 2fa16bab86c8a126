// One running sandbox: config → store → migrations → demo seller → listen, with its two background
// workers, and a clean stop (no new connections, in-flight requests finish, the workers' passes in
// flight end, the store closes). The command (main.ts) and startSandbox (index.ts) both run this.
//
// Independent start-up work overlaps: the store opens and migrates on PGlite's own thread while the
// application's modules load and the contract's validator builds on this one (openStore spawns that
// thread in a microtask, before the app's modules start loading, so it boots while they load), and
// the demo seller is stored (its secret hashed or checked by scrypt, on libuv's thread pool) while the
// app is built. The socket listens first (one turn of the event loop): a port in use refuses the
// start before a data directory or a key file is made, a port of 0 is known before the app is built
// (the hosted pages' URLs need it), and requests wait for the app.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { askForBodiesWhenRead } from './http/body-size.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { migrate } from './store/migrate.ts';
import { type Store } from './store/store.ts';
import { openStore } from './store/open-store.ts';
import { checkSecretsAtRest } from './store/secrets-at-rest-check.ts';
import { SealedSecretUnreadable } from './store/sealed-secrets.ts';
import { encryptionKeySourceOf, storeLogLines } from './store/store-log-lines.ts';

// Requests in flight at a stop get this long; the rest of the stop (workers, store) takes ~1-2 s
// more, so a whole stop fits in the 10 s a container runtime (`docker stop`) gives before SIGKILL.
const SHUTDOWN_GRACE_MS = 7_000;

export interface RunningSandbox {
  /** `http://127.0.0.1:<port>` (localhost when listening on every address). */
  url: string;
  /** The config as running: `publicBaseUrl` follows the real port when it was 0 (`issuer` is ISSUER's, whatever the port). */
  config: Config;
  store: Store;
  /** Back to the fresh state: the demo seller kept, everything else gone. */
  reset(): Promise<void>;
  /** Stops listening, lets in-flight requests finish (cut after 7 s), stops the workers, closes the store. */
  close(): Promise<void>;
}

/** Why the socket could not listen, in the sandbox's words (Node's own says `listen EADDRINUSE: address already in use`). */
function listenRefused(error: NodeJS.ErrnoException, port: number, host: string): Error {
  const reason =
    error.code === 'EADDRINUSE'
      ? `The port ${port} of ${host} is in use (another sandbox, or another program): stop it, or give another port (0 picks a free one)`
      : error.code === 'EACCES'
        ? `Listening on port ${port} of ${host} is not allowed to this user (ports under 1024 usually need privileges): give another port`
        : error.code === 'EADDRNOTAVAIL'
          ? `The address ${host} is not one of this machine's: give another host (127.0.0.1 by default)`
          : error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN'
            ? `The host name ${host} does not resolve${error.code === 'EAI_AGAIN' ? ' (no answer from the name server)' : ''}: give an address of this machine as the host (127.0.0.1 by default)`
            : undefined;
  // The code stays for programs that test it; Node's error is the cause.
  return reason === undefined ? error : Object.assign(new Error(reason, { cause: error }), { code: error.code });
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) => reject(listenRefused(error, port, host));
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export interface RunOptions {
  /**
   * Told once when the store stopped for good (its PGlite thread died, or the data directory's lock
   * was given up after the event loop stood still 8 s: a laptop asleep, a paused container), after
   * the log line: every request fails from then on. The command exits; a test suite's sandbox does not.
   */
  onStoreStopped?: (error: Error) => void;
}

/**
 * A start refused because a secret does not open, with a key file this start made (it was missing
 * beside a data directory that held a cluster): the refusal says so, since that file opens nothing
 * sealed before and must be replaced by the original. The file is left: another start given
 * SANDBOX_PREVIOUS_ENCRYPTION_KEY may have read it already and sealed the secrets again with it
 * (re-attack review, 2026-11-25: removing it lost that key). Resolving the key file under the data
 * directory's lock would let a refused start remove it safely; not done.
 */
function explainingMadeKeyFile(store: Store, error: unknown): unknown {
  if (!store.madeKeyFile || !(error instanceof Error) || !(error.cause instanceof SealedSecretUnreadable)) return error;
  return new Error(
    `${error.message} The key file ${store.madeKeyFile} was missing, and this start made a new one there, which opens nothing sealed before: put the original back in its place (replacing the new one), or give its key as SANDBOX_ENCRYPTION_KEY.`,
    { cause: error.cause },
  );
}

export async function runSandbox(configured: Config, logger: Logger, options: RunOptions = {}): Promise<RunningSandbox> {
  // In memory, from the package's pre-initialized, migrated data directory (pglite-snapshot.ts).
  let resolveApp!: (app: RequestListener) => void;
  const appReady = new Promise<RequestListener>((resolve) => (resolveApp = resolve));
  // Slow clients are timed out (Node answers 408 and closes): headers must arrive within
  // headersTimeoutMs and the whole request within requestTimeoutMs, checked every second.
  const server = createServer(
    { headersTimeout: configured.headersTimeoutMs, requestTimeout: configured.requestTimeoutMs, connectionsCheckingInterval: 1000 },
    (req, res) => void appReady.then((app) => app(req, res)),
  );
  answerClientErrors(server);
  askForBodiesWhenRead(server); // `100 Continue` only for a body about to be read (http/body-size.ts)
  const port = await listen(server, configured.port, configured.host);
  const logLines = storeLogLines(logger);
  const onFailure = (error: Error) => {
    logLines.onFailure(error);
    options.onStoreStopped?.(error);
  };
  const storeReady = openStore({ ...configured, pgliteSnapshot: true, ...logLines, onFailure }).then(async (store) => {
    try {
      const applied = await migrate(store, undefined, {
        onNewer: (newer) =>
          logger.warn(
            { newer },
            'The database holds migrations this version of the sandbox does not have: a newer version migrated it. This instance runs on it as it is; upgrade it to the version that made them',
          ),
      });
      if (applied.length) logger.info({ applied }, 'Migrations applied');
      // Every secret at rest opens (else the start is refused, naming it); those only the previous key opens are sealed again.
      const resealed = await checkSecretsAtRest(store, configured.previousEncryptionKey !== undefined);
      if (configured.previousEncryptionKey) {
        logger.info(
          { resealed, encryptionKey: encryptionKeySourceOf(configured) },
          'Every secret at rest is sealed with the current encryption key: remove SANDBOX_PREVIOUS_ENCRYPTION_KEY once no instance runs with the old key (keep the old key as long as backups made before this start)',
        );
      }
      return store;
    } catch (error) {
      await store.close().catch(() => {}); // a failed start leaves no PGlite thread or pool open
      throw explainingMadeKeyFile(store, error);
    }
  });
  // The contract's validator builds on this thread while the store opens on PGlite's.
  const appModule = import('./app.ts').then((module) => {
    module.prepareContract(configured);
    return module;
  });
  appModule.catch(() => undefined); // a broken bundle fails the start below, even when the store failed first
  const host = configured.host === '0.0.0.0' || configured.host === '::' ? 'localhost' : configured.host.includes(':') ? `[${configured.host}]` : configured.host;
  const url = `http://${host}:${port}`;
  const config: Config = configured.port === 0 ? { ...configured, publicBaseUrl: configured.publicBaseUrl.replace(/:0$/, `:${port}`) } : configured;

  try {
    const [store, { createApp, forgetCounts }, { seedDemoSeller }, { notificationDeliveryWorker }, { createBillingWorker }, { prepareReset, resetSandbox }, { notificationRetention }] = await Promise.all([
      storeReady,
      appModule,
      import('./sandbox/demo-seller.ts'),
      import('./notifications/delivery-worker.ts'),
      import('./subscription/billing-worker.ts'),
      import('./sandbox/reset.ts'),
      import('./notifications/retention.ts'),
    ]);
    // The demo seller (one scrypt of its secret, on libuv's thread pool) is stored, and the reset
    // script read, while the app is built.
    const seeded = seedDemoSeller(store, config.demoClient, logger);
    void seeded.then(() => prepareReset(store), () => undefined); // after the seed: it does not wait behind the read
    const [app, { secretChecked }] = await Promise.all([createApp({ store, config, logger }), seeded]);
    await secretChecked;
    // Merchant notifications: pending deliveries (also those left by a previous run) go out now.
    const deliveryWorker = notificationDeliveryWorker({ store, logger, config });
    // Subscriptions bill on real time (those on a sandbox test clock bill when their clock is advanced).
    const billing = createBillingWorker({ store, logger, pollIntervalMs: config.billingPollIntervalMs });
    // NOTIFICATION_RETENTION_DAYS: deliveries over for longer are deleted, at start and every hour.
    const { notificationRetentionDays: retentionDays } = config;
    const retention = retentionDays === undefined ? undefined : notificationRetention({ store, logger, retentionDays });
    billing.start();
    deliveryWorker.start();
    retention?.start();
    resolveApp(app);

    let closed: Promise<void> | undefined;
    // Resets run one after another, and close() waits for the one in flight before closing the store.
    let resetting: Promise<void> = Promise.resolve();
    const reset = () => {
      if (closed) return Promise.reject(new Error('The sandbox is closed: reset() cannot run after close()'));
      const run = resetting.then(async () => {
        await resetSandbox(store);
        forgetCounts(app); // a test's wrong secrets do not throttle the next test's token requests
      });
      resetting = run.catch(() => undefined);
      return run;
    };
    const close = () =>
      (closed ??= (async () => {
        // Connections still busy after the grace period are cut, so a stop always ends.
        const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        // Keep-alive connections become idle when their request finishes: close them then.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        const billingStopped = billing.stop(); // no new tick; the charge in progress commits (or rolls back whole)
        // Meanwhile, not after the requests: the attempts in flight are recorded, or cut after the
        // worker's grace (STOP_GRACE_MS) and given back, before the store closes; a request still
        // running may enqueue a notification, which the next start delivers.
        const deliveryStopped = deliveryWorker.stop();
        const retentionStopped = retention?.stop(); // after the batch in flight
        await new Promise<void>((resolve) => server.close(() => resolve()));
        clearTimeout(cut);
        clearInterval(idle);
        await billingStopped;
        await deliveryStopped;
        await retentionStopped;
        await resetting;
        await store.close();
      })());
    return { url, config, store, reset, close };
  } catch (error) {
    server.close();
    await storeReady.then((store) => store.close()).catch(() => {});
    throw error;
  }
}
