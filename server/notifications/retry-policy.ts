// The delivery policy the contract decides for the merchant notification (web-checkout area,
// webhook description): only a 200 ends delivery; at most 10 attempts; before attempt n (n >= 2)
// wait min(30 s · 2^(n-2), 3600 s), no jitter; 10 s timeout per attempt; redirects not followed.

export interface RetryPolicy {
  maxAttempts: number;
  /** Delay before attempt 2; it doubles for each later attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  attemptTimeoutMs: number;
}

export const CONTRACT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 10,
  baseDelayMs: 30_000,
  maxDelayMs: 3_600_000,
  attemptTimeoutMs: 10_000,
};

/** Milliseconds to wait after failed attempt `attempt` (1-based) before the next one. */
export function delayAfterAttempt(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
}

/** Only a 200 means received (the seed: "a 200 response means the webhook was received"). */
export function isReceived(statusCode: number | undefined): boolean {
  return statusCode === 200;
}
