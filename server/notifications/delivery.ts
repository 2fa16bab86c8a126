// The delivery worker of the notification outbox: claims due deliveries, POSTs each to the seller's
// notification URL with HTTP Basic, records the attempt, and ends delivery on a 200 or schedules the
// next attempt per the retry policy. Safe with several workers and instances: rows are leased with
// FOR UPDATE SKIP LOCKED, and a worker that dies mid-attempt leaves a lease that simply expires.
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import type { Store } from '../store/store.ts';
import { createPoller } from '../workers/poller.ts';
import { notificationRepository, type DeliveryRow } from './repository.ts';
import { CONTRACT_RETRY_POLICY, delayAfterAttempt, isReceived, type RetryPolicy } from './retry-policy.ts';

/** Where a seller's notifications go: `notification` of its web checkout technical configuration. */
export interface NotificationTarget {
  url: string;
  user: string;
  password: string;
}

/** A configured URL that the URL rule no longer allows (say, a private address on a shared sandbox). */
export interface RefusedTarget {
  url: string;
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
  /**
   * How the worker's connections resolve host names (dns.lookup by default): the hook that checks
   * the address actually connected to. Literal addresses do not go through it: resolveTarget checks those.
   */
  lookup?: LookupFunction;
}

export interface AttemptOutcome {
  statusCode?: number;
  latencyMs: number;
  error?: string;
}

const basic = (t: NotificationTarget) => `Basic ${Buffer.from(`${t.user}:${t.password}`).toString('base64')}`;

/** The worker's own connections (kept alive between attempts), each resolved through `lookup`. */
function agentsOf(lookup: LookupFunction | undefined) {
  const options = { keepAlive: true, ...(lookup ? { lookup } : {}) };
  return { 'http:': new http.Agent(options), 'https:': new https.Agent(options) };
}

/** One POST (redirects are not followed); the answer's status, or why there is none. */
async function post(agents: ReturnType<typeof agentsOf>, target: NotificationTarget, payload: unknown, timeoutMs: number): Promise<AttemptOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const url = new URL(target.url);
    const body = JSON.stringify(payload);
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      agent: agents[url.protocol as keyof typeof agents],
      headers: { authorization: basic(target), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'payment-platform-sandbox/1' },
      signal,
    });
    request.end(body);
    const [response] = (await once(request, 'response')) as [http.IncomingMessage];
    await finished(response.resume()).catch(() => undefined); // the body is ignored, but the socket is freed
    return { statusCode: response.statusCode, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    return { latencyMs: Math.round(performance.now() - started), error: reason };
  }
}

export function createDeliveryWorker(options: DeliveryWorkerOptions) {
  const { store, logger, resolveTarget } = options;
  const policy = options.policy ?? CONTRACT_RETRY_POLICY;
  const now = options.now ?? (() => new Date());
  const agents = agentsOf(options.lookup);
  const repo = notificationRepository(store);
  // Long enough to cover one attempt; a crashed worker's rows come back after it.
  const leaseMs = policy.attemptTimeoutMs + 5_000;

  async function attempt(delivery: DeliveryRow): Promise<void> {
    const number = delivery.attempts + 1;
    const startedAt = now();
    const resolved = await resolveTarget(delivery.seller_id);
    const target = resolved && !('refused' in resolved) ? resolved : undefined;
    const outcome: AttemptOutcome = target
      ? await post(agents, target, delivery.payload, policy.attemptTimeoutMs)
      : { latencyMs: 0, error: resolved && 'refused' in resolved ? `notification URL refused: ${resolved.refused}` : 'no notification URL is configured for the seller' };
    await store.transaction(async (tx) => {
      const r = notificationRepository(tx);
      await r.recordAttempt({
        deliveryId: delivery.delivery_id,
        attempt: number,
        started_at: startedAt,
        url: resolved?.url ?? null,
        status_code: outcome.statusCode ?? null,
        latency_ms: outcome.latencyMs,
        error: outcome.error ?? (isReceived(outcome.statusCode) ? null : `answered ${outcome.statusCode}, not 200`),
      });
      if (isReceived(outcome.statusCode)) await r.markDelivered(delivery.delivery_id, number, now());
      else if (number >= policy.maxAttempts) await r.markAbandoned(delivery.delivery_id, number);
      else await r.scheduleRetry(delivery.delivery_id, number, new Date(now().getTime() + delayAfterAttempt(policy, number)));
    });
    logger.info(
      { delivery_id: delivery.delivery_id, attempt: number, status_code: outcome.statusCode, latency_ms: outcome.latencyMs, error: outcome.error },
      'merchant notification attempt',
    );
  }

  /** One pass: every due delivery gets one attempt. Returns how many were attempted. */
  async function runOnce(): Promise<number> {
    const due = await repo.claimDue(now(), leaseMs, options.batchSize ?? 20);
    await Promise.all(due.map((d) => attempt(d).catch((error) => logger.error({ err: error, delivery_id: d.delivery_id }, 'notification attempt failed'))));
    return due.length;
  }

  const poller = createPoller(runOnce, { intervalMs: options.pollIntervalMs ?? 500, logger, name: 'notification delivery' });
  return { runOnce, start: poller.start, stop: poller.stop };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
