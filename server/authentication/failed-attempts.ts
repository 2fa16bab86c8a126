// Failed token requests per key (the service's: a client id and the caller's address): after `limit`
// wrong secrets in one window, every token request of that key answers 429 with Retry-After until
// the window ends, the correct secret too (otherwise a guesser would still learn when it is right).
// Known and unknown client ids are counted alike, so that the answer does not tell whether a client
// id exists. A success before the limit clears the count. Counted per server instance, in memory, bounded.
import { ApiError } from '../http/errors.ts';

export interface FailedAttemptsConfig {
  /** Wrong secrets allowed per client id in each window; 0 turns the throttle off. */
  limit: number;
  windowMs: number;
}

/** Client ids counted at once; past it, the oldest windows go first (over or not: every window is as long). */
export const MAX_COUNTED_CLIENTS = 100_000;

export function failedAttempts({ limit, windowMs }: FailedAttemptsConfig, maxClients = MAX_COUNTED_CLIENTS) {
  /** Client id → failures in its window, which starts at its first failure. Oldest window first. */
  const counts = new Map<string, { failures: number; endsAt: number }>();

  function current(clientId: string, now: number) {
    const count = counts.get(clientId);
    if (count && count.endsAt <= now) counts.delete(clientId);
    return count && count.endsAt > now ? count : undefined;
  }

  function makeRoom() {
    for (const clientId of counts.keys()) {
      if (counts.size < maxClients) return;
      counts.delete(clientId);
    }
  }

  return {
    /** Throws the 429 while the client id is throttled. */
    assertAllowed(clientId: string): void {
      if (limit <= 0) return;
      const now = Date.now();
      const count = current(clientId, now);
      if (!count || count.failures < limit) return;
      const seconds = Math.max(1, Math.ceil((count.endsAt - now) / 1000));
      throw new ApiError(429, 'too_many_requests', 'Too many failed attempts for this client, retry after the time in Retry-After', [], {
        'Retry-After': String(seconds),
      });
    },

    recordFailure(clientId: string): void {
      if (limit <= 0) return;
      const now = Date.now();
      const count = current(clientId, now);
      if (count) return void count.failures++;
      makeRoom();
      counts.set(clientId, { failures: 1, endsAt: now + windowMs });
    },

    recordSuccess(clientId: string): void {
      counts.delete(clientId);
    },

    /** Forgets every count (a sandbox's reset: a test's wrong secrets do not throttle the next test). */
    clear(): void {
      counts.clear();
    },

    /** Client ids counted now (for tests). */
    get size() {
      return counts.size;
    },
  };
}

export type FailedAttempts = ReturnType<typeof failedAttempts>;
