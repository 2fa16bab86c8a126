// The delivery worker of the notification outbox: claims due deliveries, POSTs each to the seller's
// notification URL with HTTP Basic, records the attempt, and ends delivery on a 200 or schedules the
// next attempt per the retry policy. Safe with several workers and instances: rows are leased with
// FOR UPDATE SKIP LOCKED, and a worker that dies mid-attempt leaves a lease that simply expires.
// An attempt's result is recorded under the delivery's row lock and numbered there; only the holder
// of the lease moves the delivery on, and a redelivery asked meanwhile makes it due again after.
// Attempts run as a pool: each pass starts what is due without waiting for the attempts already
// running, at most MAX_IN_FLIGHT in all and PER_SELLER_IN_FLIGHT of one seller; the last
// RESERVED_FOR_IDLE_SELLERS places go only to sellers with no attempt running. A seller whose
// endpoint never answers holds its own notifications back, not everyone's: three such sellers fill
// the shared places, and the reserved ones fill only if eight more sellers' endpoints hang at the
// same time (each place until its attempt times out). Sellers take turns, least recently served
// first, every seller's first attempt before any seller's second; a pass looks at a few due
// deliveries of each seller, never at a window of the oldest due rows one seller's backlog could
// fill (repository.ts). So a seller with a delivery due waits for at most about one turn of the
// sellers that have some due, whatever their backlogs. A pass runs every poll interval, and soon
// after a delivery of this process becomes due (a payment's notification committed, a redelivery).
import { once, setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { StoreUnavailable, type Store } from '../store/store.ts';
import { createPoller } from '../workers/poller.ts';
import { notificationRepository, type DeliveryRow } from './repository.ts';
import { CONTRACT_RETRY_POLICY, delayAfterAttempt, isReceived, type RetryPolicy } from './retry-policy.ts';

/** Where a seller's notifications go: `notification` of its web checkout technical configuration. */
export interface NotificationTarget {
  url: string;
  user: string;
  password: string;
}

/**
 * A seller's notification that cannot be called (a configured URL that the URL rule no longer allows,
 * say a private address on a shared sandbox): recorded as a failed attempt, `refused` as its error.
 */
export interface RefusedTarget {
  /** Null when it could not be read. */
  url: string | null;
  refused: string;
}

export interface DeliveryWorkerOptions {
  store: Store;
  logger: Logger;
  /**
   * The seller's current target, read at each attempt (a changed configuration applies to later
   * attempts). `refused` is a URL that may no longer be called: the attempt fails without a send.
   */
  resolveTarget: (sellerId: string) => Promise<NotificationTarget | RefusedTarget | undefined>;
  policy?: RetryPolicy;
  /** How often to look for due deliveries. */
  pollIntervalMs?: number;
  batchSize?: number;
  now?: () => Date;
  /** How long `stop()` lets the attempts in flight finish before it cuts them (STOP_GRACE_MS by default). */
  stopGraceMs?: number;
  /**
   * How the connections of a seller's deliveries resolve host names (dns.lookup by default): the hook
   * that checks the address actually connected to. Literal addresses do not go through it:
   * resolveTarget checks those.
   */
  lookupFor?: (sellerId: string) => LookupFunction;
}

export interface AttemptOutcome {
  statusCode?: number;
  latencyMs: number;
  error?: string;
  /** Cut by the worker's stop: not an attempt of the merchant's endpoint, which the next start makes again. */
  interrupted?: true;
}

/** Attempts in flight at once, all sellers together; and of one seller. */
export const MAX_IN_FLIGHT = 32;
export const PER_SELLER_IN_FLIGHT = 8;
/** Places of the pool only the first attempt of a seller with none running may take. */
export const RESERVED_FOR_IDLE_SELLERS = 8;
/** Sellers whose last turn the worker remembers (the least recently served are forgotten first, and then go first). */
export const MAX_SERVED_SELLERS = 10_000;
/** The most of a merchant's answer body read before the connection is dropped (the body is ignored). */
export const MAX_ANSWER_BYTES = 64 * 1024;

const basic = (t: NotificationTarget) => `Basic ${Buffer.from(`${t.user}:${t.password}`).toString('base64')}`;

/**
 * The worker's own connections, kept alive between attempts, closed after IDLE_SOCKET_MS unused
 * (a merchant that sends no Keep-Alive hint would otherwise keep them forever), at most
 * MAX_SOCKETS open at once. Each new connection is resolved by its request's `lookup` (the
 * seller's): an agent's own options would win over a request's.
 */
function agentsOf() {
  const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxTotalSockets: MAX_SOCKETS };
  return { 'http:': new http.Agent(options), 'https:': new https.Agent(options) };
}

/** How long a connection to a merchant is kept unused, and how many the worker holds at once, per scheme. */
export const IDLE_SOCKET_MS = 15_000;
export const MAX_SOCKETS = 2 * MAX_IN_FLIGHT;

/**
 * Reads and drops an answer's body so its connection can serve the next attempt; a body over
 * MAX_ANSWER_BYTES is not read to its end: the connection is dropped instead.
 */
function ignoreBody(response: http.IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let bytes = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_ANSWER_BYTES) response.destroy();
    });
    response.once('end', resolve);
    response.once('close', resolve);
    response.once('error', () => resolve());
  });
}

/** One POST (redirects are not followed); the answer's status, or why there is none (`interrupted` when `stop` aborted it). */
async function post(
  agents: ReturnType<typeof agentsOf>,
  lookup: LookupFunction | undefined,
  target: NotificationTarget,
  payload: unknown,
  timeoutMs: number,
  stop: AbortSignal,
): Promise<AttemptOutcome> {
  const started = performance.now();
  // One controller for the timeout and the worker's stop (not AbortSignal.any, whose sources Node 20 holds weakly).
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const onStop = () => controller.abort();
  stop.addEventListener('abort', onStop, { once: true });
  if (stop.aborted) controller.abort(); // stopped before this began: an aborted signal fires no listener
  try {
    const url = new URL(target.url);
    const body = JSON.stringify(payload);
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      agent: agents[url.protocol as keyof typeof agents],
      ...(lookup ? { lookup } : {}),
      headers: { authorization: basic(target), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'payment-platform-sandbox/1' },
      signal,
    });
    request.end(body);
    const [response] = (await once(request, 'response')) as [http.IncomingMessage];
    await ignoreBody(response);
    return { statusCode: response.statusCode, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    if (stop.aborted) return { latencyMs: Math.round(performance.now() - started), interrupted: true };
    const reason = signal.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    return { latencyMs: Math.round(performance.now() - started), error: reason };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}

/**
 * How long a stop waits for the attempts in flight (each may take the policy's 10 s): a sandbox
 * stopped by a container runtime gets ~10 s before it is killed, and a killed one leaves its data
 * directory locked for 10 s more. The attempts cut then are not recorded: their leases are given
 * back, and the next start makes them again.
 */
export const STOP_GRACE_MS = 2_000;

/**
 * An attempt's POST ends this long before its lease at the latest, and is not begun with less than
 * MIN_ATTEMPT_MS left: the lease was counted from before the claim waited for a connection (and
 * resolving the target may wait for one too), so on a busy pool an attempt given the policy's whole
 * timeout could outlive its lease, and another pass lease the delivery and POST it again meanwhile.
 */
export const LEASE_MARGIN_MS = 2_000;
export const MIN_ATTEMPT_MS = 1_000;

export function createDeliveryWorker(options: DeliveryWorkerOptions) {
  const { store, logger, resolveTarget } = options;
  const policy = options.policy ?? CONTRACT_RETRY_POLICY;
  const now = options.now ?? (() => new Date());
  const agents = agentsOf();
  const repo = notificationRepository(store);
  // Long enough to cover one attempt; a crashed worker's rows come back after it.
  const leaseMs = policy.attemptTimeoutMs + 5_000;
  // One signal for every attempt in flight (up to MAX_IN_FLIGHT listeners): no leak warning past 10.
  const stopSignal = () => {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    return controller;
  };
  let stopping = stopSignal();

  /** An attempt cut by the stop, or not begun because of it: given back, made again at the next start. */
  async function giveBack(delivery: DeliveryRow): Promise<void> {
    await repo.releaseLease(delivery.delivery_id, delivery.locked_until!);
    logger.info({ delivery_id: delivery.delivery_id }, 'merchant notification attempt cut by the stop, not recorded: made again at the next start');
  }

  async function attempt(delivery: DeliveryRow): Promise<void> {
    const stop = stopping.signal; // this run's: a later start() makes another
    if (stop.aborted) return giveBack(delivery); // leased by a pass that ended after the stop's grace
    const startedAt = now();
    const resolved = await resolveTarget(delivery.seller_id);
    const target = resolved && !('refused' in resolved) ? resolved : undefined;
    const leaseLeftMs = delivery.locked_until!.getTime() - now().getTime() - LEASE_MARGIN_MS;
    if (target && leaseLeftMs < MIN_ATTEMPT_MS) {
      // Not given back: due again once the lease ends (within LEASE_MARGIN_MS + MIN_ATTEMPT_MS), so
      // that a store this slow is not asked for it again at every pass, each ending the same way.
      logger.warn({ delivery_id: delivery.delivery_id }, `merchant notification attempt not made: its lease ran out while the store was busy; due again when the lease ends, within ${(LEASE_MARGIN_MS + MIN_ATTEMPT_MS) / 1000} s`);
      return;
    }
    const outcome: AttemptOutcome = target
      ? await post(agents, options.lookupFor?.(delivery.seller_id), target, delivery.payload, Math.min(policy.attemptTimeoutMs, leaseLeftMs), stop)
      : { latencyMs: 0, error: resolved && 'refused' in resolved ? resolved.refused : 'no notification URL is configured for the seller' };
    if (outcome.interrupted) return giveBack(delivery);
    const number = await store
      .transaction((tx) =>
        notificationRepository(tx).recordResult(
          delivery.delivery_id,
          delivery.locked_until!,
          {
            started_at: startedAt,
            url: resolved?.url ?? null,
            status_code: outcome.statusCode ?? null,
            latency_ms: outcome.latencyMs,
            error: outcome.error ?? (isReceived(outcome.statusCode) ? null : `answered ${outcome.statusCode}, not 200`),
          },
          (attempts) =>
            isReceived(outcome.statusCode)
              ? { status: 'delivered' }
              : attempts >= policy.maxAttempts
                ? { status: 'abandoned' }
                : { status: 'pending', at: new Date(now().getTime() + delayAfterAttempt(policy, attempts)) },
          now(),
        ),
      )
      .catch((error: unknown) => {
        if (!target) throw error;
        // Made, and perhaps received, but not recorded: at least once, the merchant may get it twice.
        const made = { delivery_id: delivery.delivery_id, status_code: outcome.statusCode, error: outcome.error };
        if (error instanceof StoreUnavailable) {
          // Said once by the store; its COMMIT may have landed before the connection went.
          logger.warn(made, 'merchant notification attempt made but perhaps not recorded (the store cannot be reached): unless it was, made again once its lease ends');
        } else {
          // The store answered with an error (a statement past its time limit, say): rolled back.
          logger.error({ ...made, err: error }, 'merchant notification attempt made but not recorded: made again once its lease ends');
        }
        return null;
      });
    if (number === null) return;
    if (number === undefined) {
      logger.info({ delivery_id: delivery.delivery_id }, 'merchant notification attempt not recorded: the delivery was removed meanwhile (a sandbox reset, or NOTIFICATION_RETENTION_DAYS)');
      return;
    }
    logger.info(
      { delivery_id: delivery.delivery_id, attempt: number, status_code: outcome.statusCode, latency_ms: outcome.latencyMs, error: outcome.error },
      'merchant notification attempt',
    );
  }

  // The attempts running, and how many of them each seller has.
  const running = new Set<Promise<void>>();
  const perSeller = new Map<string, number>();
  // When each seller last had a delivery leased (least recently first, at most MAX_SERVED_SELLERS): sellers take turns.
  const served = new LRUCache<string, number>({ max: MAX_SERVED_SELLERS });

  /** Starts one attempt, tracked until its outcome is recorded. */
  function start(delivery: DeliveryRow): Promise<void> {
    const seller = delivery.seller_id;
    perSeller.set(seller, (perSeller.get(seller) ?? 0) + 1);
    const run = attempt(delivery)
      .catch((error) =>
        // Not recorded: its lease ends and the delivery is attempted again. An outage of the store is said once by the store.
        error instanceof StoreUnavailable
          ? logger.debug({ error: error.message, delivery_id: delivery.delivery_id }, 'notification attempt failed')
          : logger.error({ err: error, delivery_id: delivery.delivery_id }, 'notification attempt failed'),
      )
      .finally(() => {
        running.delete(run);
        const left = (perSeller.get(seller) ?? 1) - 1;
        if (left > 0) perSeller.set(seller, left);
        else perSeller.delete(seller);
      });
    running.add(run);
    return run;
  }

  /** Leases what is due, fairly, within the room left in the pool, and starts it. */
  async function startDue(): Promise<Promise<void>[]> {
    const room = Math.min(options.batchSize ?? MAX_IN_FLIGHT, MAX_IN_FLIGHT - running.size);
    if (room <= 0) return [];
    const sharedLimit = MAX_IN_FLIGHT - RESERVED_FOR_IDLE_SELLERS - running.size;
    const due = await repo.claimDue(now(), leaseMs, room, { perSeller: PER_SELLER_IN_FLIGHT, running: perSeller, sharedLimit, served });
    const at = Date.now();
    for (const { seller_id } of due) served.set(seller_id, at);
    return due.map(start);
  }

  /** One pass that waits for the attempts it started (tests, and callers that want them recorded). */
  async function runOnce(): Promise<number> {
    const started = await startDue();
    await Promise.all(started);
    return started.length;
  }

  /** The poller's pass: starts what is due and returns without waiting for it. */
  const tick = async () => (await startDue()).length;

  const poller = createPoller(tick, { intervalMs: options.pollIntervalMs ?? 500, logger, name: 'notification delivery' });
  let stopListening: (() => void) | undefined;
  return {
    runOnce,
    /** Passes every poll interval, and soon after a delivery of this process becomes due (Store.onAnnounced). */
    start() {
      stopping = stopSignal(); // a stop still pending cuts only the attempts of the run it stops
      stopListening ??= store.onAnnounced?.('notification-due', poller.wake);
      poller.start();
    },
    /**
     * No new attempt; the attempts running are recorded before this resolves, or, still running after
     * `stopGraceMs`, cut and given back (made again at the next start).
     */
    async stop() {
      stopListening?.();
      stopListening = undefined;
      const run = stopping;
      const cut = setTimeout(() => run.abort(), options.stopGraceMs ?? STOP_GRACE_MS);
      await poller.stop();
      await Promise.all(running);
      clearTimeout(cut);
      // The connections kept alive go too: a stopped worker holds nothing open.
      for (const agent of Object.values(agents)) agent.destroy();
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
