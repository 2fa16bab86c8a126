// A background loop of the reference server (notification delivery, real-time billing): one pass
// every interval, never two at once, errors logged and retried on the next pass, and a stop that
// waits for the pass in flight, so that SIGTERM never cuts a charge or a delivery in half. A pass
// can be asked early (`wake`: a notification just became due), never closer than MIN_GAP_MS, nor
// than four times the last pass's duration, to the last one.
import type { Logger } from 'pino';
import { StoreUnavailable } from '../store/store.ts';

export interface Poller {
  start(): void;
  /**
   * Runs the next pass early: after the running one if there is one, and at the soonest the gap
   * after the last one ended (MIN_GAP_MS, or four times as long as that pass took if more, so that
   * passes asked early take at most a fifth of the time; the interval at most); wakes in between
   * make one pass. Nothing once stopped.
   */
  wake(): void;
  /** No new pass; resolves when the running one has finished. */
  stop(): Promise<void>;
}

/** The least time between the end of a pass and the start of the next, however often woken (more after a slow pass). */
export const MIN_GAP_MS = 25;

export function createPoller(pass: () => Promise<number>, options: { intervalMs: number; logger: Logger; name: string }): Poller {
  const { intervalMs, logger, name } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  let woken = false;
  let lastEnded = -Infinity;
  let gap = MIN_GAP_MS;

  function run() {
    timer = undefined;
    woken = false;
    const started = performance.now();
    running = pass()
      .then((done) => void (done && logger.debug({ done }, `${name}: pass done`)))
      .catch((err) =>
        // An outage of the store is said once by the store (store-log-lines.ts), not by every pass.
        err instanceof StoreUnavailable ? logger.debug({ error: err.message }, `${name}: pass failed; retried on the next one`) : logger.error({ err }, `${name}: pass failed; retried on the next one`),
      )
      .finally(() => {
        running = undefined;
        lastEnded = performance.now();
        gap = Math.min(intervalMs, Math.max(MIN_GAP_MS, 4 * (lastEnded - started))); // never later than the interval's pass
        schedule(woken ? gap : intervalMs);
      });
  }

  function schedule(delayMs: number) {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  }

  return {
    /** Once: a second start, or a start while the pass of a stop not yet awaited runs, keeps one loop. */
    start() {
      if (!stopped) return;
      stopped = false;
      if (!running) schedule(intervalMs); // else the running pass schedules the next when it ends
    },
    wake() {
      if (stopped) return;
      woken = true;
      if (running) return; // the pass that ends schedules the next after MIN_GAP_MS
      clearTimeout(timer);
      schedule(Math.max(0, lastEnded + gap - performance.now()));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
