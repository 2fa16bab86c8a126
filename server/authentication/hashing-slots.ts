// A bound on secret hashing (scrypt) running at once, shared fairly between callers' addresses.
// scrypt runs on libuv's thread pool (4 threads by default), as do the ES256 signatures of every
// token and DNS lookups: a flood of wrong guesses, each one scrypt, used to fill that pool's queue,
// and a legitimate token call waited behind it for seconds (bench/RESULTS.md). Here at most
// `concurrency` hashes run at once, so the pool always has threads for signatures. The calls waiting
// take turns by caller address (round robin), so a flood from a few addresses delays another
// address's call by one hash per flooding address, not by the whole line: each address has at most
// `maxWaitingPerAddress` calls waiting, and when the whole line (`maxWaiting`) is full a call takes
// the place of the newest call of the address with the most waiting (by two or more), else of the
// waiting address that had the most hashes in the last minute, when that is more than its own; so
// many addresses with one call each push each other out, not a newcomer. A call refused
// (HashingBusy) is answered 429 at once. A secret already verified (verified-secrets.ts) never
// comes here.
import { availableParallelism } from 'node:os';
import { LRUCache } from 'lru-cache';

/**
 * At most two threads of the pool hash (the others stay free for signatures and lookups), and never
 * every CPU: on two CPUs one hash at a time, so that the event loop keeps a CPU of its own.
 */
export const HASHING_CONCURRENCY = Math.max(1, Math.min(2, availableParallelism() - 1));
/** Calls waiting, all addresses together: ~100 ms per hash, so ~6.4 s for the last in line. */
export const HASHING_MAX_WAITING = 64 * HASHING_CONCURRENCY;
/** Calls of one address waiting at once. */
export const HASHING_MAX_WAITING_PER_ADDRESS = 4;
/** How long an address's hashes are remembered (to choose whose place a newcomer takes), and for how many addresses. */
export const RECENT_HASHES_MS = 60_000;
export const MAX_REMEMBERED_ADDRESSES = 10_000;

/** Thrown when a call finds no place in the line, or loses its place to another address's. */
export class HashingBusy extends Error {
  constructor() {
    super('Too many client secrets are being checked at once');
    this.name = 'HashingBusy';
  }
}

interface Waiter {
  /** Hands the slot over. */
  start: () => void;
  refuse: (error: HashingBusy) => void;
}

export function hashingSlots({
  concurrency = HASHING_CONCURRENCY,
  maxWaiting = HASHING_MAX_WAITING,
  maxWaitingPerAddress = HASHING_MAX_WAITING_PER_ADDRESS,
} = {}) {
  let running = 0;
  let waiting = 0;
  /** Each address's waiting calls, oldest first; addresses in the order of their turns (a Map keeps insertion order). */
  const lines = new Map<string, Waiter[]>();
  /** Hashes each address started in its current minute (a minute from its first; the least recently counted forgotten first). */
  const recent = new LRUCache<string, number>({ max: MAX_REMEMBERED_ADDRESSES, ttl: RECENT_HASHES_MS, noUpdateTTL: true });
  const hashesOf = (address: string): number => recent.get(address) ?? 0;
  const counted = (address: string): void => void recent.set(address, hashesOf(address) + 1);

  /** The first call of the address whose turn it is; that address goes to the back of the turns. */
  function nextInTurn(): Waiter | undefined {
    const first = lines.entries().next();
    if (first.done) return undefined;
    const [address, line] = first.value;
    const waiter = line.shift()!;
    lines.delete(address);
    if (line.length > 0) lines.set(address, line);
    waiting--;
    return waiter;
  }

  const release = () => {
    const next = nextInTurn();
    if (next) next.start(); // the slot is handed over as is
    else running--;
  };

  /**
   * Whether a call of `address` may wait: its address has room, and so has the line; or the line's
   * longest address has at least two more waiting than this one, or a waiting address had more
   * hashes in the last minute than this one (that address's newest call is refused).
   */
  function placeFor(address: string): boolean {
    const own = lines.get(address)?.length ?? 0;
    if (own >= maxWaitingPerAddress) return false;
    if (waiting < maxWaiting) return true;
    let longest: [string, Waiter[]] | undefined;
    let busiest: [string, Waiter[], number] | undefined;
    for (const [other, line] of lines) {
      if (!longest || line.length > longest[1].length) longest = [other, line];
      const hashes = hashesOf(other);
      if (!busiest || hashes > busiest[2]) busiest = [other, line, hashes];
    }
    const [from, line] =
      longest && longest[1].length > own + 1 ? longest : busiest && busiest[0] !== address && busiest[2] > hashesOf(address) ? busiest : [];
    if (!from || !line) return false;
    line.pop()!.refuse(new HashingBusy());
    if (line.length === 0) lines.delete(from);
    waiting--;
    return true;
  }

  return {
    /**
     * Runs `work` once a slot is free and it is `address`'s turn (at once when a slot is free);
     * rejects with HashingBusy when there is no place to wait, or when the place is given away.
     */
    async run<T>(work: () => Promise<T>, address = ''): Promise<T> {
      if (running < concurrency) running++;
      else if (!placeFor(address)) throw new HashingBusy();
      else {
        await new Promise<void>((start, refuse) => {
          const line = lines.get(address);
          if (line) line.push({ start, refuse });
          else lines.set(address, [{ start, refuse }]);
          waiting++;
        });
      }
      counted(address);
      try {
        return await work();
      } finally {
        release();
      }
    },

    get running() {
      return running;
    },
    get waiting() {
      return waiting;
    },
  };
}

export type HashingSlots = ReturnType<typeof hashingSlots>;
