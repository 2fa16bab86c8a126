// When the client may send a call again, and how long it waits first. Only an operation that is safe
// to repeat is ever retried, because a retried exchange may be the second one the platform carries
// out (a connection that dropped after the request left, a 502 or 504 from a gateway whose upstream
// did the work). Which operations are safe is decided from the contract's operation table: the
// method, the token host, and the operationIds whose contract makes a repeat harmless.
import type { OperationId } from '@payment-platform/contract/operations';
import type { Route } from './contract.ts';
import { whenAborted } from './abort-listeners.ts';

/**
 * Operations whose contract description makes a repeat harmless, and why. Keyed by the contract's
 * OperationId type, so a renamed operation fails to compile; test/client/retries.test.ts lists the
 * whole decision over the operation table, so a new operation is a deliberate choice.
 */
export const CONTRACT_IDEMPOTENT: Partial<Record<OperationId, string>> = {
  applySubscriptionEvent: 'idempotency_key: the same key and event replay the first 200 with no second effect',
  updatePlanStatus: 'sets the status named in the path; setting the status the plan already has changes nothing',
  updateFloatingInstallment: 'PUT of the installment amount and date: "sending the same change twice gives the same answer"',
  updateTechnicalConfiguration: 'replaces the values sent (merged property by property): the same body twice leaves the same configuration',
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a call may be sent again after a connection failure, a 429 or a 502/503/504. Never a
 * payment intent, a subscription, a product image or any other creation: the platform defines no
 * idempotency key for them, so a repeat could charge or create twice.
 */
export function isSafeToRetry(method: string, route: Route | undefined): boolean {
  if (SAFE_METHODS.has(method)) return true;
  if (!route) return false;
  // A token request creates nothing the merchant owns: a second one only issues another token.
  if (route.host === 'auth') return true;
  return CONTRACT_IDEMPOTENT[route.operationId] !== undefined;
}

/** The statuses retried: too many requests, and the gateway's and the platform's transient failures. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_RETRY_BASE_DELAY_MS = 500;
export const DEFAULT_RETRY_MAX_DELAY_MS = 20_000;

export interface RetryTiming {
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * `Retry-After` in milliseconds: delta-seconds (`"3"`) or an HTTP date (`"Wed, 21 Oct 2026 07:28:00
 * GMT"`, counted from `now`; a past date is 0). Undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only an HTTP date: `Date.parse` also reads strings such as "1.5", which are no Retry-After.
  if (!/^[A-Za-z]{3},? /.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long to wait before retry number `retry` (1, 2, ...): what `Retry-After` asked when it did, or
 * exponential backoff with full jitter (a random time between 0 and base × 2^(retry−1), capped).
 * Undefined when the platform asked for longer than `maxDelayMs`: the answer is then returned rather
 * than waited for.
 */
export function retryDelayMs(retry: number, retryAfter: number | undefined, timing: RetryTiming, random = Math.random): number | undefined {
  if (retryAfter !== undefined) return retryAfter <= timing.maxDelayMs ? retryAfter : undefined;
  const ceiling = Math.min(timing.maxDelayMs, timing.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stopWaiting?.();
      resolve();
    }, ms);
    const stopWaiting = signal
      ? whenAborted(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
  });
}
