// A background loop of the reference server (notification delivery, real-time billing): one pass
// every interval, never two at once, errors logged and retried on the next pass, and a stop that
// waits for the pass in flight, so that SIGTERM never cuts a charge or a delivery in half.
import type { Logger } from 'pino';

export interface Poller {
  start(): void;
  /** No new pass; resolves when the running one has finished. */
  stop(): Promise<void>;
}

export function createPoller(pass: () => Promise<number>, options: { intervalMs: number; logger: Logger; name: string }): Poller {
  const { intervalMs, logger, name } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass()
        .then((done) => void (done && logger.debug({ done }, `${name}: pass done`)))
        .catch((err) => logger.error({ err }, `${name}: pass failed; retried on the next one`))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  }

  return {
    start() {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
