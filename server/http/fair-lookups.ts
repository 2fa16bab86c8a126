// Host name lookups shared fairly between sellers: each seller has one lookup in flight at a time
// (its next ones wait their turn, at most MAX_WAITING_PER_SELLER of them), and a caller waits at most
// LOOKUP_TIMEOUT_MS for its answer; a lookup already running cannot be stopped, and keeps its
// seller's turn until it ends. A seller whose names never answer (a domain of theirs whose name
// server stays silent) so holds one lookup at a time, not a queue of them in front of the others'.
// Where sellers are others (private URLs refused), lookups also keep off libuv's thread pool, on
// which dns.lookup resolves two names at a time whatever the turns (network-resolver.ts).
import { networkResolver } from './network-resolver.ts';
import { systemResolver } from './public-addresses.ts';
import type { HostResolver } from './host-resolver.ts';

/** The longest a caller waits for a host name's addresses, its turn included. */
export const LOOKUP_TIMEOUT_MS = 5_000;
/** The longest one lookup keeps its seller's turn, ended or not. */
export const MAX_TURN_MS = 30_000;
/** Lookups of one seller waiting or running at once; past it, refused at once. */
export const MAX_WAITING_PER_SELLER = 16;

/** The resolver of one seller's host names. */
export type SellerLookups = (sellerId: string) => HostResolver;

const refused = (code: 'ETIMEOUT' | 'EBUSY', message: string) => Object.assign(new Error(message), { code });

export function fairLookups(resolve: HostResolver, options: { timeoutMs?: number; maxWaiting?: number; maxTurnMs?: number } = {}): SellerLookups {
  const timeoutMs = options.timeoutMs ?? LOOKUP_TIMEOUT_MS;
  const maxTurnMs = options.maxTurnMs ?? MAX_TURN_MS;
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
    // The seller's next lookup waits for this one to end, or at most MAX_TURN_MS: a lookup that never
    // ends (a resolver that hangs) must not keep the seller's lookups refused for good.
    let turnTimer: NodeJS.Timeout | undefined;
    const turnOver = new Promise<void>((done) => (turnTimer = setTimeout(done, maxTurnMs).unref()));
    const ended = () => clearTimeout(turnTimer);
    own.tail = Promise.race([turn, turnOver]).then(ended, ended);
    void own.tail.then(() => {
      own.size -= 1;
      if (own.size === 0 && queues.get(sellerId) === own) queues.delete(sellerId);
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned = true;
        reject(refused('ETIMEOUT', `${hostname} did not resolve within ${timeoutMs} ms`));
      }, timeoutMs).unref();
    });
    return Promise.race([turn, deadline]).finally(() => clearTimeout(timer));
  };
}

const shared = new WeakMap<HostResolver, SellerLookups>();
let network: HostResolver | undefined;

/**
 * The sellers' lookups through `resolve`, one fair queue per resolver in the process: the technical
 * configuration's check and the delivery worker's connections share one. By default, where private
 * notification URLs are allowed (a sandbox on this machine, whose sellers are its user) the system's
 * resolver (dns.lookup: /etc/hosts, nsswitch, mDNS); where they are not (a sandbox others reach), the
 * network resolver, which keeps off libuv's thread pool (network-resolver.ts).
 */
export function sellerLookupsOf(resolve: HostResolver | undefined, allowPrivateAddresses: boolean): SellerLookups {
  resolve ??= allowPrivateAddresses ? systemResolver : (network ??= networkResolver());
  let lookups = shared.get(resolve);
  if (!lookups) shared.set(resolve, (lookups = fairLookups(resolve)));
  return lookups;
}
