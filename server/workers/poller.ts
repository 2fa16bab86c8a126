// A background loop of the reference server (notification delivery, real-time billing): one pass
// every interval, never two at once, errors logged and retried on the next pass, and a stop that
// waits for the pass in flight, so that SIGTERM never cuts a charge or a delivery in half. A pass
// can be asked early (`wake`: a notification just became due), never more often than MIN_GAP_MS apart.
import type { Logger } from 'pino';

export interface Poller {
  start(): void;
  /**
   * Runs the next pass early: MIN_GAP_MS after the last one ended at the soonest, after the running
   * one if there is one; wakes in between make one pass. Nothing once stopped.
   */
  wake(): void;
  /** No new pass; resolves when the running one has finished. */
  stop(): Promise<void>;
}

/** The least time between the end of a pass and the start of the next, however often woken. */
export const MIN_GAP_MS = 25;

export function createPoller(pass: () => Promise<number>, options: { intervalMs: number; logger: Logger; name: string }): Poller {
  const { intervalMs, logger, name } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  let woken = false;
  let lastEnded = -Infinity;

  function run() {
    timer = undefined;
    woken = false;
    running = pass()
      .then((done) => void (done && logger.debug({ done }, `${name}: pass done`)))
      .catch((err) => logger.error({ err }, `${name}: pass failed; retried on the next one`))
      .finally(() => {
        running = undefined;
        lastEnded = performance.now();
        schedule(woken ? MIN_GAP_MS : intervalMs);
      });
  }

  function schedule(delayMs: number) {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  }

  return {
    start() {
      stopped = false;
      schedule(intervalMs);
    },
    wake() {
      if (stopped) return;
      woken = true;
      if (running) return; // the pass that ends schedules the next after MIN_GAP_MS
      clearTimeout(timer);
      schedule(Math.max(0, lastEnded + MIN_GAP_MS - performance.now()));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
