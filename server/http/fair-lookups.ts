// Host name lookups shared fairly between sellers. dns.lookup runs getaddrinfo on libuv's thread pool,
// where Node lets at most half of the pool's threads (2 by default) resolve names at once, and a name
// whose name server never answers holds its thread until the system's resolver gives up (seconds per
// try). One seller could so queue every other seller's lookups behind names of its own (a domain
// whose name server stays silent): their notification URL changes and their deliveries' connections
// would wait with them. So each seller has one lookup in flight at a time (its next ones wait their
// turn, at most MAX_WAITING_PER_SELLER of them), and a caller waits at most LOOKUP_TIMEOUT_MS for its
// answer; a lookup already running cannot be stopped, and keeps its seller's turn until it ends.
import { systemResolver } from './public-addresses.ts';
import type { HostResolver } from './host-resolver.ts';

/** The longest a caller waits for a host name's addresses, its turn included. */
export const LOOKUP_TIMEOUT_MS = 5_000;
/** Lookups of one seller waiting or running at once; past it, refused at once. */
export const MAX_WAITING_PER_SELLER = 16;

/** The resolver of one seller's host names. */
export type SellerLookups = (sellerId: string) => HostResolver;

const refused = (code: 'ETIMEOUT' | 'EBUSY', message: string) => Object.assign(new Error(message), { code });

export function fairLookups(resolve: HostResolver, options: { timeoutMs?: number; maxWaiting?: number } = {}): SellerLookups {
  const timeoutMs = options.timeoutMs ?? LOOKUP_TIMEOUT_MS;
  const maxWaiting = options.maxWaiting ?? MAX_WAITING_PER_SELLER;
  /** Each seller's lookups, one after another: the end of the last one queued, and how many are queued. */
  const queues = new Map<string, { tail: Promise<void>; size: number }>();
  return (sellerId) => (hostname) => {
    let queue = queues.get(sellerId);
    if (!queue) queues.set(sellerId, (queue = { tail: Promise.resolve(), size: 0 }));
    if (queue.size >= maxWaiting) return Promise.reject(refused('EBUSY', `${hostname} not resolved: ${maxWaiting} host name lookups of this seller are under way`));
    const own = queue;
    own.size += 1;
    let abandoned = false; // its caller stopped waiting before its turn came: the turn passes at once
    const turn = own.tail.then(() => (abandoned ? [] : resolve(hostname)));
    own.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    void own.tail.then(() => {
      own.size -= 1;
      if (own.size === 0 && queues.get(sellerId) === own) queues.delete(sellerId);
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned = true;
        reject(refused('ETIMEOUT', `${hostname} did not resolve within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    return Promise.race([turn, deadline]).finally(() => clearTimeout(timer));
  };
}

const shared = new WeakMap<HostResolver, SellerLookups>();

/**
 * The sellers' lookups through `resolve` (the system's by default), one fair queue per resolver in the
 * process: the technical configuration's check and the delivery worker's connections share the
 * system's, as they share libuv's threads.
 */
export function sellerLookupsOf(resolve: HostResolver = systemResolver): SellerLookups {
  let lookups = shared.get(resolve);
  if (!lookups) shared.set(resolve, (lookups = fairLookups(resolve)));
  return lookups;
}
