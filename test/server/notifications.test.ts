// The merchant notification outbox and its delivery worker, on every store kind: what the merchant
// receives, the retry policy, every attempt recorded, leases that survive a crashed worker, two
// workers that never deliver one notification twice in one pass, sellers whose endpoints never
// answer holding back only their own notifications (places kept for sellers with none running), and
// a redelivery asked during an attempt.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { createDeliveryWorker, LEASE_MARGIN_MS, MAX_IN_FLIGHT, MIN_ATTEMPT_MS, PER_SELLER_IN_FLIGHT, RESERVED_FOR_IDLE_SELLERS, type NotificationTarget } from '../../server/notifications/delivery.ts';
import { enqueueCheckoutNotification } from '../../server/notifications/outbox.ts';
import { notificationRepository, SKIPPED_SELLERS } from '../../server/notifications/repository.ts';
import { CONTRACT_RETRY_POLICY, delayAfterAttempt, type RetryPolicy } from '../../server/notifications/retry-policy.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { StoreUnavailable, type Store } from '../../server/store/store.ts';
import { deref, loadPlatform } from '../support/contract.ts';
import { CapturedLogs } from './support/server.ts';
import { listeningInstances, STORE_KINDS } from './support/stores.ts';

const doc = loadPlatform();
const media = doc.webhooks!['checkout-notification']!.post.requestBody.content['application/json'];
const PAYLOAD = deref(doc, media.examples.authorized_credit).value;
const POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 60_000, attemptTimeoutMs: 300 };

interface Received {
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A merchant endpoint on 127.0.0.1 that answers the statuses it is told, in order ('hang' never answers, a promise answers when it settles). */
async function merchant(answers: Array<number | 'hang' | Promise<number>>) {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ url: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
    const answer = await (answers.shift() ?? 200);
    if (answer === 'hang') return; // never answers; the worker's timeout must end the attempt
    res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, received, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('retry policy of the contract', () => {
  it('waits 30 s before the 2nd attempt, doubling up to one hour, over at most 10 attempts', () => {
    const delays = Array.from({ length: 9 }, (_, i) => delayAfterAttempt(CONTRACT_RETRY_POLICY, i + 1) / 1000);
    expect(delays).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    expect(CONTRACT_RETRY_POLICY).toMatchObject({ maxAttempts: 10, attemptTimeoutMs: 10_000 });
  });
});

for (const kind of STORE_KINDS) {
  describe(`notification outbox on ${kind.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let again: () => Promise<Store>;
    let clock: Date;
    let target: NotificationTarget | undefined;
    const logs = new CapturedLogs();
    const logger = createLogger('info', logs);
    const worker = (s: Store = store) =>
      createDeliveryWorker({ store: s, logger, policy: POLICY, now: () => clock, resolveTarget: async () => target });

    beforeAll(async () => {
      ({ store, drop, again } = await kind.fresh());
      await ensureDemoSeller(store, { clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret' }, logger);
    });
    afterAll(() => drop());
    beforeEach(async () => {
      clock = new Date('2026-11-22T12:00:00Z');
      await store.query('DELETE FROM notification_deliveries');
    });

    /** The ids of `count` copies of the demo seller, in the order of their ids (created once, kept across tests). */
    async function copiesOfDemoSeller(count: number): Promise<string[]> {
      const ids = Array.from({ length: count }, (_, i) => `5d3c0b6e-8f1a-4c2d-9e7b-${String(i).padStart(12, '0')}`);
      await store.query(
        `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant)
         SELECT id, merchant_id, 'slow-' || (i - 1), 'Slow shop', email, country, currencies, services, payments, tenant
           FROM sellers, unnest($1::uuid[]) WITH ORDINALITY AS u(id, i) WHERE seller_id = $2
         ON CONFLICT (seller_id) DO NOTHING`,
        [ids, DEMO_SELLER_ID],
      );
      return ids;
    }

    /** Pending deliveries of `sellers`, the i-th due at `at(i)`. */
    const pendingAt = (sellers: string[], at: (i: number) => Date) =>
      store.query(
        `INSERT INTO notification_deliveries (delivery_id, seller_id, event, mode, payload, next_attempt_at, created_at)
         SELECT gen_random_uuid(), seller, 'checkout-notification', 'instant', $3, due, $4 FROM unnest($1::uuid[], $2::timestamptz[]) AS u(seller, due)`,
        [sellers, sellers.map((_, i) => at(i)), JSON.stringify(PAYLOAD), clock],
      );
    const leasedSellers = (rows: Array<{ seller_id: string }>) => rows.map((r) => r.seller_id).sort();

    const enqueue = () => store.transaction((tx) => enqueueCheckoutNotification(tx, DEMO_SELLER_ID, PAYLOAD, clock));
    const stored = (id: string) => notificationRepository(store).find(DEMO_SELLER_ID, id);
    const attempts = (id: string) => notificationRepository(store).attemptsOf(id);

    describe('with a merchant endpoint', () => {
      let endpoint: Awaited<ReturnType<typeof merchant>>;
      afterEach(() => endpoint?.close());

      it('makes no attempt when its lease is nearly over before the POST (the store kept it waiting), and delivers once that lease has ended, not at every pass before', async () => {
        endpoint = await merchant([200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        const leaseMs = POLICY.attemptTimeoutMs + 5_000;
        // The claim and the target's lookup took all but MIN_ATTEMPT_MS - 1 ms of the lease's usable part.
        const waited = leaseMs - LEASE_MARGIN_MS - MIN_ATTEMPT_MS + 1;
        const late = createDeliveryWorker({ store, logger, policy: POLICY, now: () => clock, resolveTarget: async () => ((clock = new Date(clock.getTime() + waited)), target) });
        expect(await late.runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(0);
        expect(await attempts(id)).toEqual([]);
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 0 });
        expect(logs.lines.some((l) => l.msg === 'merchant notification attempt not made: its lease ran out while the store was busy; due again when the lease ends, within 3 s')).toBe(true);
        expect(await worker().runOnce()).toBe(0); // still leased: a pass meanwhile does not ask for it again
        clock = new Date(clock.getTime() + LEASE_MARGIN_MS + MIN_ATTEMPT_MS);
        expect(await worker().runOnce()).toBe(1); // the lease has ended
        expect(endpoint.received).toHaveLength(1);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
      });

      it('says, at warn and without a stack, that an attempt it made could not be recorded because the store cannot be reached, and makes it again once the lease ends', async () => {
        endpoint = await merchant([200, 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        // The store answers the claim, then cannot be reached when the attempt is to be recorded.
        const unreachable: Store = { ...store, transaction: () => Promise.reject(new StoreUnavailable('The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused')) };
        expect(await worker(unreachable).runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(1); // made
        expect(await attempts(id)).toEqual([]); // not recorded
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 0 });
        const said = logs.lines.filter((l) => l.delivery_id === id && l.level >= 40);
        expect(said).toEqual([
          expect.objectContaining({ level: 40, status_code: 200, msg: 'merchant notification attempt made but perhaps not recorded (the store cannot be reached): unless it was, made again once its lease ends' }),
        ]);
        expect(JSON.stringify(said)).not.toContain('stack');
        clock = new Date(clock.getTime() + POLICY.attemptTimeoutMs + 5_000); // the lease has ended
        expect(await worker().runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(2); // at least once: the merchant got it twice
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
      });

      it('says, at error with the store\'s error, that an attempt it made was not recorded when the store refused the record (rolled back), and makes it again once the lease ends', async () => {
        endpoint = await merchant([200, 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        const timedOut = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
        const refusing: Store = { ...store, transaction: () => Promise.reject(timedOut) };
        expect(await worker(refusing).runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(1); // made
        expect(await attempts(id)).toEqual([]); // not recorded
        const said = logs.lines.filter((l) => l.delivery_id === id && l.level >= 40);
        expect(said).toEqual([
          expect.objectContaining({
            level: 50,
            status_code: 200,
            err: expect.objectContaining({ message: 'canceling statement due to statement timeout', code: '57014' }),
            msg: 'merchant notification attempt made but not recorded: made again once its lease ends',
          }),
        ]);
        clock = new Date(clock.getTime() + POLICY.attemptTimeoutMs + 5_000); // the lease has ended
        expect(await worker().runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(2);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
      });

      it('gives an attempt only what is left of its lease, less the margin, when that is under the policy\'s timeout', async () => {
        let answer!: (status: number) => void;
        endpoint = await merchant([new Promise<number>((resolve) => (answer = resolve))]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        const policy = { ...POLICY, attemptTimeoutMs: 3_000 };
        const waited = policy.attemptTimeoutMs + 5_000 - LEASE_MARGIN_MS - 1_500; // 1.5 s usable left
        const late = createDeliveryWorker({ store, logger, policy, now: () => clock, resolveTarget: async () => ((clock = new Date(clock.getTime() + waited)), target) });
        expect(await late.runOnce()).toBe(1);
        answer(200); // too late: the attempt gave up after 1.5 s, not the policy's 3 s
        expect(await attempts(id)).toMatchObject([{ attempt: 1, status_code: null, error: 'no answer within 1500 ms' }]);
      });

      it('POSTs the payload with Basic credentials and ends on the first 200', async () => {
        endpoint = await merchant([200]);
        target = { url: endpoint.url, user: 'loja', password: 's3nh@:forte' };
        const id = await enqueue();
        expect(await worker().runOnce()).toBe(1);
        expect(endpoint.received).toHaveLength(1);
        const [call] = endpoint.received;
        expect(call!.headers.authorization).toBe(`Basic ${Buffer.from('loja:s3nh@:forte').toString('base64')}`);
        expect(call!.headers['content-type']).toBe('application/json');
        expect(call!.body).toEqual(PAYLOAD);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1, mode: 'instant' });
        expect(await attempts(id)).toMatchObject([{ attempt: 1, status_code: 200, error: null, url: endpoint.url }]);
        expect(await worker().runOnce()).toBe(0); // nothing left to deliver
      });

      it('retries after a non-200 answer and a timeout, on the policy schedule, with the same body', async () => {
        endpoint = await merchant([500, 'hang', 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        await worker().runOnce();
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: new Date(clock.getTime() + 1_000) });
        expect(await worker().runOnce()).toBe(0); // not due yet
        clock = new Date(clock.getTime() + 1_000);
        await worker().runOnce();
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 2, next_attempt_at: new Date(clock.getTime() + 2_000) });
        clock = new Date(clock.getTime() + 2_000);
        await worker().runOnce();
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 3 });
        const recorded = await attempts(id);
        expect(recorded.map((a) => a.status_code)).toEqual([500, null, 200]);
        expect(recorded[0]!.error).toBe('answered 500, not 200');
        expect(recorded[1]!.error).toBe('no answer within 300 ms');
        expect(recorded[1]!.latency_ms).toBeGreaterThanOrEqual(250);
        expect(endpoint.received.map((r) => r.body)).toEqual([PAYLOAD, PAYLOAD, PAYLOAD]);
      });

      it('abandons the delivery after the last attempt', async () => {
        endpoint = await merchant([503, 503, 503, 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        for (let i = 0; i < 5; i++) {
          await worker().runOnce();
          clock = new Date(clock.getTime() + 60_000);
        }
        expect(await stored(id)).toMatchObject({ status: 'abandoned', attempts: 3 });
        expect(endpoint.received).toHaveLength(3);
      });

      it('makes an abandoned delivery due again on redelivery, for its seller only', async () => {
        endpoint = await merchant([200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        await store.query(`UPDATE notification_deliveries SET status = 'abandoned', attempts = 3 WHERE delivery_id = $1`, [id]);
        const repo = notificationRepository(store);
        expect(await repo.redeliver('00000000-0000-4000-8000-000000000000', id, clock)).toBe(false);
        expect(await repo.redeliver(DEMO_SELLER_ID, id, clock)).toBe(true);
        await worker().runOnce();
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 4 });
      });

      const patientWorker = () => createDeliveryWorker({ store, logger, policy: { ...POLICY, attemptTimeoutMs: 5_000 }, now: () => clock, resolveTarget: async () => target });

      /**
       * A notification whose first attempt the merchant has received and not yet answered: `release`
       * answers it with `status` (the worker waits up to 5 s; POLICY's 300 ms would race the test),
       * `first` is the pass that made it. Later attempts are answered `later`.
       */
      async function attemptInFlight(status: number, later: number[] = []) {
        let release!: () => void;
        const answer = new Promise<number>((resolve) => (release = () => resolve(status)));
        endpoint = await merchant([answer, ...later]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        const first = patientWorker().runOnce();
        for (let i = 0; i < 200 && endpoint.received.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(endpoint.received).toHaveLength(1);
        return { id, first, release };
      }

      it('records the attempt in flight when a redelivery is asked during it, then attempts again: one attempt at a time', async () => {
        const { id, first, release } = await attemptInFlight(200, [200]);
        expect(await notificationRepository(store).redeliver(DEMO_SELLER_ID, id, clock)).toBe(true);
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 0, redelivery_requested: true });
        expect(await patientWorker().runOnce()).toBe(0); // the attempt in flight still holds the delivery
        release();
        expect(await first).toBe(1);
        // The 200 of the first attempt did not end the delivery: the redelivery asked for another one.
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: clock, redelivery_requested: false, locked_until: null });
        expect(await patientWorker().runOnce()).toBe(1);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 2 });
        expect((await attempts(id)).map((a) => [a.attempt, a.status_code])).toEqual([[1, 200], [2, 200]]);
        expect(endpoint.received).toHaveLength(2);
      });

      it('records an attempt whose lease another worker took, and leaves the delivery to that worker', async () => {
        const { id, first, release } = await attemptInFlight(500);
        const othersLease = new Date(clock.getTime() + 60_000);
        await store.query(`UPDATE notification_deliveries SET locked_until = $2 WHERE delivery_id = $1`, [id, othersLease]);
        release();
        await first;
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: clock, locked_until: othersLease });
        expect(await attempts(id)).toMatchObject([{ attempt: 1, status_code: 500 }]);
      });

      it('drops the result of an attempt whose delivery was removed meanwhile (a sandbox reset), without an error', async () => {
        const { id, first, release } = await attemptInFlight(200);
        await store.query(`DELETE FROM notification_deliveries WHERE delivery_id = $1`, [id]);
        const errorsBefore = logs.lines.filter((l) => l.level >= 50).length;
        release();
        expect(await first).toBe(1);
        expect(logs.lines.filter((l) => l.level >= 50)).toHaveLength(errorsBefore);
        expect(logs.lines.at(-1)).toMatchObject({ delivery_id: id, msg: 'merchant notification attempt not recorded: the delivery was removed meanwhile (a sandbox reset, or NOTIFICATION_RETENTION_DAYS)' });
        expect(await attempts(id)).toEqual([]);
      });

      /** `count` sellers (copies of the demo seller) whose endpoints never answer, each with `due` notifications due before anything else. */
      async function hangingSellers(count: number, due: number) {
        const ids = await copiesOfDemoSeller(count);
        const slow = await merchant(Array(count * due).fill('hang'));
        await store.transaction(async (tx) => {
          for (let n = 0; n < due; n++) for (const id of ids) await enqueueCheckoutNotification(tx, id, PAYLOAD, new Date(clock.getTime() - 60_000 + n));
        });
        const targets = new Map(ids.map((id) => [id, { url: `${slow.url}${id}`, user: 'slow', password: 'slow' }]));
        /** Attempts each hanging seller's endpoint has received, by seller. */
        const received = () => ids.map((id) => slow.received.filter((r) => r.url === `/${id}`).length);
        return { targets, received, close: slow.close };
      }

      /** A pool whose attempts time out after `timeoutMs`, delivering to the demo seller's endpoint and the hanging sellers'. */
      const poolBeside = (slow: Awaited<ReturnType<typeof hangingSellers>>, timeoutMs: number) =>
        createDeliveryWorker({
          store,
          logger,
          policy: { ...POLICY, attemptTimeoutMs: timeoutMs },
          now: () => clock,
          resolveTarget: async (seller) => (seller === DEMO_SELLER_ID ? { url: endpoint.url, user: 'loja', password: 'senha' } : slow.targets.get(seller)),
          pollIntervalMs: 20,
        });

      it('lets sellers whose endpoints never answer hold back only their own notifications', async () => {
        // Nine of them, with deliveries due before the demo seller's: at eight attempts each they would
        // fill the pool of 32 places, and their first attempts and 24 more would, oldest first.
        const slow = await hangingSellers(9, 40);
        endpoint = await merchant([200]);
        const id = await enqueue();
        const pool = poolBeside(slow, 60_000); // no hanging attempt times out while the test runs (slow.close() ends them)
        const warnings: string[] = [];
        const onWarning = (warning: Error) => void warnings.push(warning.name);
        process.on('warning', onWarning);
        const started = Date.now();
        pool.start();
        try {
          await expect.poll(async () => (await stored(id))?.status, { timeout: 20_000, interval: 25 }).toBe('delivered');
          expect(Date.now() - started).toBeLessThan(20_000); // so before any hanging attempt timed out
          const counts = slow.received();
          expect(Math.max(...counts)).toBeLessThanOrEqual(PER_SELLER_IN_FLIGHT);
          // Their further attempts shared MAX_IN_FLIGHT - RESERVED_FOR_IDLE_SELLERS places; the rest stayed free.
          expect(counts.reduce((a, b) => a + b)).toBeLessThanOrEqual(MAX_IN_FLIGHT - RESERVED_FOR_IDLE_SELLERS + counts.length);
          expect(endpoint.received).toHaveLength(1);
          await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on a later tick
          expect(warnings).not.toContain('MaxListenersExceededWarning'); // 32 attempts listen to the worker's stop
        } finally {
          process.off('warning', onWarning);
          await slow.close(); // ends the hanging attempts, so stopping does not wait for their timeouts
          await pool.stop();
        }
      });

      it('keeps places for sellers with nothing running while hanging sellers hold every shared one', async () => {
        // Four of them would hold 32 places at eight each; they get the shared 24 and one first attempt each.
        const slow = await hangingSellers(4, 40);
        endpoint = await merchant([200]);
        const pool = poolBeside(slow, 5_000);
        pool.start();
        try {
          const held = MAX_IN_FLIGHT - RESERVED_FOR_IDLE_SELLERS + 4;
          await expect.poll(() => slow.received().reduce((a, b) => a + b), { timeout: 2_000, interval: 25 }).toBe(held);
          // A notification that falls due now, for a seller with nothing running, takes a reserved place at the next pass.
          const id = await enqueue();
          await expect.poll(async () => (await stored(id))?.status, { timeout: 2_500, interval: 25 }).toBe('delivered');
          expect(endpoint.received).toHaveLength(1);
          expect(slow.received().reduce((a, b) => a + b)).toBe(held); // none of theirs took a reserved place meanwhile
          expect(Math.max(...slow.received())).toBeLessThanOrEqual(PER_SELLER_IN_FLIGHT);
        } finally {
          await slow.close(); // ends the hanging attempts, so stopping does not wait for their timeouts
          await pool.stop();
        }
      });

      /**
       * `sellers` sellers with `due` notifications each, due over the last ten minutes, whose endpoint
       * answers 500 at once; the demo seller's notification `id`, due now; and a worker for both.
       */
      async function failingBacklogs(sellers: number, due: number) {
        const made = await hangingSellers(sellers, 0);
        await made.close();
        for (const seller of made.targets.keys()) {
          await store.query(
            `INSERT INTO notification_deliveries (delivery_id, seller_id, event, mode, payload, next_attempt_at, created_at)
             SELECT gen_random_uuid(), $1, 'checkout-notification', 'instant', $2, $3::timestamptz - make_interval(secs => 600 - n), $3
               FROM generate_series(1, $4::int) AS n`,
            [seller, JSON.stringify(PAYLOAD), clock, due],
          );
        }
        const failing = await merchant(Array(sellers * due).fill(500));
        endpoint = await merchant([200]);
        const id = await enqueue();
        const pool = createDeliveryWorker({
          store,
          logger,
          now: () => clock,
          // 10 s: the 32 attempts of a pass go out at once, and the demo seller's 200 must not be timed out on a loaded machine.
          policy: { ...POLICY, attemptTimeoutMs: 10_000 },
          resolveTarget: async (seller) => ({ url: seller === DEMO_SELLER_ID ? endpoint.url : failing.url, user: 'loja', password: 'senha' }),
        });
        return { id, pool, failing };
      }

      it('lets sellers take turns: forty sellers with old backlogs failing at once delay a new notification by a turn, not by their backlogs', async () => {
        const { id, pool, failing } = await failingBacklogs(40, 20);
        try {
          // 41 sellers with a delivery due and 32 places: the demo seller's comes in the second pass at the latest.
          for (let pass = 0; pass < 2 && (await stored(id))?.status !== 'delivered'; pass++) await pool.runOnce();
          expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
          expect(endpoint.received).toHaveLength(1);
          expect(failing.received.length).toBeLessThan(2 * MAX_IN_FLIGHT); // far from the 800 due before it
        } finally {
          await failing.close();
        }
      });

      it("leases another seller's due notification in the same pass as a backlog of hundreds that fail at once", async () => {
        // 600 of a seller's notifications due before the demo seller's one (more than a window of the oldest due rows held).
        const { id, pool, failing } = await failingBacklogs(1, 600);
        try {
          const leased = await pool.runOnce();
          expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
          expect(endpoint.received).toHaveLength(1);
          expect(leased).toBe(1 + PER_SELLER_IN_FLIGHT); // the backlog's seller got its eight, no more
          expect(failing.received).toHaveLength(PER_SELLER_IN_FLIGHT);
        } finally {
          await failing.close();
        }
      });

      it('keeps its connection to the merchant alive between attempts, and closes it when stopped', async () => {
        const open = new Set<import('node:net').Socket>();
        const kept = createServer((req, res) => {
          req.resume();
          req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
        });
        kept.keepAliveTimeout = 60_000; // a merchant that keeps connections for a minute
        kept.on('connection', (socket) => (open.add(socket), socket.on('close', () => open.delete(socket))));
        await new Promise<void>((resolve) => kept.listen(0, '127.0.0.1', resolve));
        try {
          target = { url: `http://127.0.0.1:${(kept.address() as AddressInfo).port}/`, user: 'loja', password: 'senha' };
          const running = worker();
          await enqueue();
          await running.runOnce();
          await enqueue();
          await running.runOnce();
          expect(open.size).toBe(1); // one connection served both attempts, and is still open
          await running.stop();
          await expect.poll(() => open.size).toBe(0);
        } finally {
          kept.closeAllConnections();
          await new Promise((resolve) => kept.close(resolve));
        }
      });

      it('reads at most 64 KiB of a merchant answer body, then drops the connection', async () => {
        let written = 0;
        let cut = false;
        const big = createServer((req, res) => {
          req.resume();
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          const more = () => {
            while (written < 200 * 1024 * 1024 && !res.destroyed) {
              written += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', more);
            }
            res.end();
          };
          res.on('close', () => (cut = !res.writableFinished));
          more();
        });
        await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
        try {
          target = { url: `http://127.0.0.1:${(big.address() as AddressInfo).port}/`, user: 'loja', password: 'senha' };
          const id = await enqueue();
          await worker().runOnce();
          expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
          await expect.poll(() => cut).toBe(true);
          expect(written).toBeLessThan(50 * 1024 * 1024); // far from the 200 MB it would have sent
        } finally {
          big.closeAllConnections();
          await new Promise((resolve) => big.close(resolve));
        }
      });

      it('delivers a notification soon after its transaction commits, and a redelivery, not at the next poll', async () => {
        endpoint = await merchant([200, 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const running = createDeliveryWorker({ store, logger, policy: POLICY, now: () => clock, resolveTarget: async () => target, pollIntervalMs: 60_000 });
        running.start();
        try {
          const id = await enqueue();
          await expect.poll(async () => (await stored(id))?.status, { timeout: 5_000, interval: 20 }).toBe('delivered');
          expect(await notificationRepository(store).redeliver(DEMO_SELLER_ID, id, clock)).toBe(true);
          await expect.poll(async () => (await stored(id))?.attempts, { timeout: 5_000, interval: 20 }).toBe(2);
          expect(endpoint.received).toHaveLength(2);
        } finally {
          await running.stop();
        }
      });

      it('delivers a notification made due through another instance soon after it commits, not at the next poll', async () => {
        endpoint = await merchant([200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const other = await again(); // PostgreSQL: another pool and listening connection; PGlite: the same process
        const running = createDeliveryWorker({ store: other, logger, policy: POLICY, now: () => clock, resolveTarget: async () => target, pollIntervalMs: 60_000 });
        // `store` may listen already (an earlier test's worker): wait for `other`'s connection too.
        const before = other.kind === 'postgres' ? await listeningInstances(other) : 0;
        running.start();
        try {
          if (other.kind === 'postgres') await expect.poll(() => listeningInstances(other), { timeout: 5_000 }).toBe(before + 1);
          const id = await enqueue(); // through `store`
          await expect.poll(async () => (await stored(id))?.status, { timeout: 5_000, interval: 20 }).toBe('delivered');
          expect(endpoint.received).toHaveLength(1);
        } finally {
          await running.stop();
        }
      });

      it('cuts an attempt still running a grace after the stop, records nothing of it, and makes it again at the next start', async () => {
        endpoint = await merchant(['hang', 200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const stopping = createDeliveryWorker({ store, logger, policy: { ...POLICY, attemptTimeoutMs: 30_000 }, now: () => clock, resolveTarget: async () => target, stopGraceMs: 300 });
        stopping.start();
        const id = await enqueue();
        await expect.poll(() => endpoint.received.length, { timeout: 5_000, interval: 20 }).toBe(1); // its merchant does not answer
        const asked = Date.now();
        await stopping.stop();
        const took = Date.now() - asked;
        expect(took).toBeGreaterThanOrEqual(250); // the grace first
        expect(took).toBeLessThan(3_000); // not the attempt's 30 s
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 0 });
        expect(await attempts(id)).toEqual([]);
        const { rows } = await store.query<{ leased: boolean; due: boolean }>('SELECT locked_until IS NOT NULL AS leased, next_attempt_at <= $2 AS due FROM notification_deliveries WHERE delivery_id = $1', [id, clock]);
        expect(rows).toEqual([{ leased: false, due: true }]); // given back: due at once
        expect(logs.lines.at(-1)).toMatchObject({ delivery_id: id, msg: 'merchant notification attempt cut by the stop, not recorded: made again at the next start' });
        expect(await worker().runOnce()).toBe(1);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
        expect(endpoint.received).toHaveLength(2);
      });

      it('gives back, unattempted, a delivery whose attempt only reaches its merchant after the stop cut the others', async () => {
        endpoint = await merchant(['hang']);
        let resolving = false;
        const slowTarget = async () => {
          resolving = true;
          await new Promise((resolve) => setTimeout(resolve, 600)); // past the grace below
          return { url: endpoint.url, user: 'loja', password: 'senha' };
        };
        const stopping = createDeliveryWorker({ store, logger, policy: { ...POLICY, attemptTimeoutMs: 30_000 }, now: () => clock, resolveTarget: slowTarget, stopGraceMs: 100 });
        stopping.start();
        const id = await enqueue();
        await expect.poll(() => resolving, { timeout: 5_000, interval: 10 }).toBe(true);
        const asked = Date.now();
        await stopping.stop();
        expect(Date.now() - asked).toBeLessThan(3_000); // not the attempt's 30 s
        expect(endpoint.received).toEqual([]); // never sent
        expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 0 });
        expect(await attempts(id)).toEqual([]);
        const { rows } = await store.query<{ leased: boolean }>('SELECT locked_until IS NOT NULL AS leased FROM notification_deliveries WHERE delivery_id = $1', [id]);
        expect(rows).toEqual([{ leased: false }]);
      });

      it('takes a delivery back from a worker that died mid-attempt, once its lease expires', async () => {
        endpoint = await merchant([200]);
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        const id = await enqueue();
        await notificationRepository(store).claimDue(clock, 10_000, 10); // leased by a worker that then dies
        expect(await worker().runOnce()).toBe(0);
        clock = new Date(clock.getTime() + 10_001);
        expect(await worker().runOnce()).toBe(1);
        expect(await stored(id)).toMatchObject({ status: 'delivered', attempts: 1 });
      });

      it('delivers each due notification once when two workers (instances) run at the same time', async () => {
        endpoint = await merchant(Array(20).fill(200));
        target = { url: endpoint.url, user: 'loja', password: 'senha' };
        for (let i = 0; i < 10; i++) await enqueue();
        const other = await again();
        // Concurrent passes until one finds nothing (a pass takes at most PER_SELLER_IN_FLIGHT of one seller).
        let total = 0;
        for (let pass = 0; pass < 5; pass++) {
          const counts = await Promise.all([worker().runOnce(), worker(other).runOnce()]);
          total += counts[0]! + counts[1]!;
          if (counts[0]! + counts[1]! === 0) break;
        }
        expect(total).toBe(10);
        expect(endpoint.received).toHaveLength(10);
        const { rows } = await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM notification_attempts`);
        expect(rows[0]!.n).toBe(10);
        const delivered = await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM notification_deliveries WHERE status = 'delivered' AND attempts = 1`);
        expect(delivered.rows[0]!.n).toBe(10);
      });
    });

    it('finds the sellers with a delivery due one by one, past sellers whose pending deliveries are not due yet or leased', async () => {
      // A hundred sellers with retries due in an hour, one whose due delivery is leased, and the demo
      // seller served last: the sellers with pending deliveries are found through the index.
      const sellers = await copiesOfDemoSeller(SKIPPED_SELLERS - 27);
      await pendingAt(sellers.slice(1), () => new Date(clock.getTime() + 3_600_000));
      await pendingAt(sellers.slice(0, 1), () => new Date(clock.getTime() - 1_000));
      const repo = notificationRepository(store);
      expect(leasedSellers(await repo.claimDue(clock, 10_000, 32))).toEqual([sellers[0]]);
      const id = await enqueue();
      const leased = await repo.claimDue(clock, 10_000, 32, { perSeller: 8, served: [[DEMO_SELLER_ID, Date.now()]] });
      expect(leased.map((r) => r.delivery_id)).toEqual([id]);
      expect(await repo.claimDue(clock, 10_000, 32)).toEqual([]);
    });

    it('takes turns between more sellers than it finds one by one: the least recently served first, then the oldest due', async () => {
      // More sellers with a delivery due than SKIPPED_SELLERS, each one due; the later ids are due
      // earlier. The hundred first were served lately: the 32 oldest-due of the others are leased,
      // eleven of them beyond the SKIPPED_SELLERS first ids.
      const sellers = await copiesOfDemoSeller(SKIPPED_SELLERS + 12);
      await pendingAt(sellers, (i) => new Date(clock.getTime() - 60_000 - i * 1_000));
      const served = sellers.slice(0, 100).map((seller, i) => [seller, 1_000 + i] as const);
      const leased = await notificationRepository(store).claimDue(clock, 10_000, 32, { perSeller: 8, served });
      expect(leasedSellers(leased)).toEqual(sellers.slice(-32));
      expect(leased.every((r) => r.locked_until?.getTime() === clock.getTime() + 10_000)).toBe(true);
    });

    it('records a failed attempt and retries when the seller has no notification URL', async () => {
      target = undefined;
      const id = await enqueue();
      await worker().runOnce();
      expect(await stored(id)).toMatchObject({ status: 'pending', attempts: 1 });
      expect(await attempts(id)).toMatchObject([{ attempt: 1, status_code: null, url: null, error: 'no notification URL is configured for the seller' }]);
    });

    it('refuses a payload that breaks the contract, and stores nothing', async () => {
      const broken = { ...PAYLOAD, mode: 'teleport' };
      await expect(store.transaction((tx) => enqueueCheckoutNotification(tx, DEMO_SELLER_ID, broken, clock))).rejects.toThrow(/mode/);
      expect(await notificationRepository(store).listForSeller(DEMO_SELLER_ID)).toEqual([]);
    });

    it('stores nothing when the transaction of the payment result rolls back', async () => {
      await expect(
        store.transaction(async (tx) => {
          await enqueueCheckoutNotification(tx, DEMO_SELLER_ID, PAYLOAD, clock);
          throw new Error('the payment result could not be recorded');
        }),
      ).rejects.toThrow();
      expect(await notificationRepository(store).listForSeller(DEMO_SELLER_ID)).toEqual([]);
    });
  });
}
