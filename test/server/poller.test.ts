// The background loop (server/workers/poller.ts): a pass every interval, never two at once, and a
// pass asked early by `wake` (a notification just became due), never closer than MIN_GAP_MS to the
// last one however often woken.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { StoreUnavailable } from '../../server/store/store.ts';
import { createPoller, MIN_GAP_MS } from '../../server/workers/poller.ts';
import { CapturedLogs } from './support/server.ts';

describe('poller', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  /** A poller of 1 s whose passes are counted; `hold` makes the next pass wait until released. */
  function counted() {
    const state = { passes: 0, running: 0, most: 0, release: undefined as (() => void) | undefined, hold: false };
    const poller = createPoller(
      async () => {
        state.passes++;
        state.most = Math.max(state.most, ++state.running);
        if (state.hold) await new Promise<void>((resolve) => (state.release = resolve));
        state.running--;
        return 0;
      },
      { intervalMs: 1_000, logger: createLogger('silent', new CapturedLogs()), name: 'test' },
    );
    /** Advances to `ms` from now: the pass count is `before` 1 ms earlier, `before + 1` then. */
    const nextPassIn = async (ms: number, before: number) => {
      await vi.advanceTimersByTimeAsync(ms - 1);
      expect(state.passes).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(state.passes).toBe(before + 1);
    };
    /** A woken pass that takes `ms`, ended by the time this resolves. */
    const slowPass = async (ms: number) => {
      state.hold = true;
      poller.wake();
      await vi.advanceTimersByTimeAsync(ms);
      state.hold = false;
      state.release!();
      await vi.advanceTimersByTimeAsync(0);
    };
    return { poller, state, nextPassIn, slowPass };
  }

  it('passes every interval, and at once when woken', async () => {
    const { poller, state, nextPassIn } = counted();
    poller.start();
    await nextPassIn(1_000, 0);
    await vi.advanceTimersByTimeAsync(500);
    poller.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.passes).toBe(2);
    // The interval starts again from the woken pass.
    await nextPassIn(1_000, 2);
    await poller.stop();
  });

  it('logs a failed pass at error with its stack, but one that failed because the store cannot be reached only at debug: the store says the outage once', async () => {
    const logs = new CapturedLogs();
    const failures = [new Error('the pass broke'), new StoreUnavailable('The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused')];
    const poller = createPoller(
      async () => {
        throw failures.shift();
      },
      { intervalMs: 1_000, logger: createLogger('debug', logs), name: 'test' },
    );
    poller.start();
    await vi.advanceTimersByTimeAsync(2_000);
    await poller.stop();
    const failed = logs.lines.filter((l) => l.msg === 'test: pass failed; retried on the next one');
    expect(failed.map((l) => [l.level, l.err?.message ?? l.error])).toEqual([
      [50, 'the pass broke'],
      [20, 'The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused'],
    ]);
    expect(failed[0]!.err?.stack).toContain('the pass broke');
    expect(JSON.stringify(failed[1])).not.toContain('stack');
  });

  it('keeps one loop when started twice, or started again while the pass of a stop not awaited runs', async () => {
    const { poller, state, nextPassIn } = counted();
    poller.start();
    poller.start();
    await nextPassIn(1_000, 0);
    await nextPassIn(1_000, 1);
    state.hold = true;
    await vi.advanceTimersByTimeAsync(1_000); // a third pass, held
    expect(state.passes).toBe(3);
    const stopping = poller.stop();
    poller.start();
    state.hold = false;
    state.release!();
    await stopping;
    await nextPassIn(1_000, 3);
    await nextPassIn(1_000, 4);
    expect(state.most).toBe(1);
    await poller.stop();
  });

  it('makes one pass of many wakes, MIN_GAP_MS after the last pass at the soonest', async () => {
    const { poller, state, nextPassIn } = counted();
    poller.start();
    poller.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.passes).toBe(1);
    for (let i = 0; i < 10; i++) poller.wake();
    await nextPassIn(MIN_GAP_MS, 1);
    await vi.advanceTimersByTimeAsync(MIN_GAP_MS * 4);
    expect(state.passes).toBe(2); // no wake since: the next pass is the interval's
    await poller.stop();
  });

  it('runs the pass a wake asked during a pass after it, never two at once', async () => {
    const { poller, state, nextPassIn } = counted();
    poller.start();
    state.hold = true;
    poller.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.running).toBe(1);
    poller.wake();
    await vi.advanceTimersByTimeAsync(5);
    expect(state.passes).toBe(1); // still held: no second pass beside it
    state.hold = false;
    state.release!();
    await nextPassIn(MIN_GAP_MS, 1);
    expect(state.most).toBe(1);
    await poller.stop();
  });

  it('waits four times as long as a slow pass took before a woken one, so woken passes take at most a fifth of the time', async () => {
    const { poller, nextPassIn, slowPass } = counted();
    poller.start();
    await slowPass(100); // pass 1 takes 100 ms
    poller.wake();
    await nextPassIn(400, 1);
    // A pass slower than a quarter of the interval: the next woken one waits the interval, no more.
    // (Pass 2 ended at once; this wake runs pass 3 after the 400 ms gap, and it takes 400 ms.)
    await slowPass(800);
    poller.wake();
    await nextPassIn(1_000, 3);
    await poller.stop();
  });

  it('does nothing when woken before its start or after its stop', async () => {
    const { poller, state } = counted();
    poller.wake();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(state.passes).toBe(0);
    poller.start();
    await poller.stop();
    poller.wake();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(state.passes).toBe(0);
  });
});
