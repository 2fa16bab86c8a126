// A bound on secret hashing (scrypt) running at once. scrypt runs on libuv's thread pool (4 threads
// by default), as do the ES256 signatures of every token and DNS lookups: a flood of wrong guesses,
// each one scrypt, used to fill that pool's queue, and a legitimate token call waited behind it for
// seconds (bench/RESULTS.md). Here at most `concurrency` hashes run at once and at most `maxWaiting`
// wait; past that a check is refused at once (the caller answers 429), so the pool always has
// threads for signatures. A secret already verified (verified-secrets.ts) never comes here.
import { availableParallelism } from 'node:os';

/**
 * At most two threads of the pool hash (the others stay free for signatures and lookups), and never
 * every CPU: on two CPUs one hash at a time, so that the event loop keeps a CPU of its own.
 */
export const HASHING_CONCURRENCY = Math.max(1, Math.min(2, availableParallelism() - 1));
/** ~100 ms per hash: the last in line waits ~1.6 s at worst. */
export const HASHING_MAX_WAITING = 16 * HASHING_CONCURRENCY;

/** Thrown when every slot is taken and the line is full. */
export class HashingBusy extends Error {
  constructor() {
    super('Too many client secrets are being checked at once');
    this.name = 'HashingBusy';
  }
}

export function hashingSlots({ concurrency = HASHING_CONCURRENCY, maxWaiting = HASHING_MAX_WAITING } = {}) {
  let running = 0;
  const waiting: Array<() => void> = [];

  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  return {
    /** Runs `work` once a slot is free (at once when one is); rejects with HashingBusy when the line is full. */
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (running < concurrency) running++;
      else if (waiting.length >= maxWaiting) throw new HashingBusy();
      else await new Promise<void>((resolve) => waiting.push(resolve)); // the slot is handed over as is
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
      return waiting.length;
    },
  };
}

export type HashingSlots = ReturnType<typeof hashingSlots>;
