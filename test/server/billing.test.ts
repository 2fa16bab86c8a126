// The recurring billing engine through sandbox test clocks (and on real time): schedules charged on
// their dates with floating installments, specific cycles, future starts, failures and retries with
// their notifications, plan deactivation, Brazilian debit, cancellation, the test clock API's
// errors (clocks created at once for one customer too), and (PostgreSQL) two instances advancing one
// clock at once and the charge list read during a billing transaction.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCheckoutNotification } from '../../client/webhooks/verify.ts';
import { resetSandbox } from '../../server/sandbox/reset.ts';
import { sealedSecretsOf } from '../../server/store/store.ts';
import { createBillingWorker } from '../../server/subscription/billing-worker.ts';
import { notificationPasswordContext } from '../../server/store/sealed-secrets.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, type TestServer, ADMIN, startPlatformServer } from './support/server.ts';
import { freshPostgresSchema, DATABASE_URL } from './support/stores.ts';
import { addSeller, createPlan, EVENTS, expectError, PLANS, STORES, subscribe, subscriptionBody, SUBSCRIPTIONS, type TestSeller } from './support/recurrence.ts';

const CLOCKS = '/sandbox/v1/test-clocks';
const midnight = (date: string) => `${date}T00:00:00Z`;

async function createClock(server: TestServer, seller: TestSeller, frozenTime: string, customerIds: string[]) {
  const res = await server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: seller.sellerId, name: 'clock', frozen_time: frozenTime, customer_ids: customerIds });
  expect(res.status).toBe(201);
  return res.body as { test_clock_id: string };
}

async function advance(server: TestServer, clockId: string, frozenTime: string) {
  const res = await server.http.post(`${CLOCKS}/${clockId}/advance`).set('Authorization', ADMIN).send({ frozen_time: frozenTime });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { charges_run: number; frozen_time: string; subscription_ids: string[] };
}

async function charges(server: TestServer, subscriptionId: string) {
  const res = await server.http.get(`/sandbox/v1/subscriptions/${subscriptionId}/charges`).set('Authorization', ADMIN);
  expect(res.status).toBe(200);
  return res.body as { status: string; installments: Array<Record<string, any>> };
}

const customer = () => String(Math.floor(Math.random() * 1e11)).padStart(11, '1');

describe.each(STORES)('billing engine and test clocks on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    seller = await addSeller(server);
  });
  afterAll(() => server?.close());

  const getSubscription = async (id: string, expand = false) =>
    (await server.http.get(`${SUBSCRIPTIONS}/${id}${expand ? '?expand=floating_data' : ''}`).set(seller.auth)).body;

  it('charges a 12-installment monthly plan over a year: 12 charges on their dates, floating installments applied', async () => {
    const plan = await createPlan(server, seller, { floating_data: [{ installment: 3, amount: 4990 }] });
    const who = customer();
    const clock = await createClock(server, seller, '2026-01-31T09:00:00Z', [who]);
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }));
    const id = created.subscription.subscription_id;
    expect(created).toMatchObject({ create_date: '2026-01-31T09:00:00Z', status: 'success', payment_date: 31, next_scheduled_date: midnight('2026-02-28'), end_date: midnight('2026-12-31') });
    // Installment 5 moves to 10 June (between 31 May's neighbours) and costs 12.34.
    const put = await server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/5`).set(seller.auth).send({ new_amount: 1234, new_scheduled_date: '2026-06-10' });
    expect(put.status).toBe(200);

    const half = await advance(server, clock.test_clock_id, '2026-03-15T00:00:00Z');
    expect(half).toMatchObject({ charges_run: 1, frozen_time: '2026-03-15T00:00:00Z', subscription_ids: [id] });
    expect(await getSubscription(id)).toMatchObject({ status: 'success', next_scheduled_date: midnight('2026-03-31') });

    const started = performance.now();
    const year = await advance(server, clock.test_clock_id, '2027-01-31T09:00:00Z');
    console.log(`[billing] advancing a test clock ~10.5 months (10 monthly charges) took ${(performance.now() - started).toFixed(1)} ms on ${kind}`);
    expect(year.charges_run).toBe(10);
    const list = await charges(server, id);
    const dates = ['01-31', '02-28', '03-31', '04-30', '06-10', '06-30', '07-31', '08-31', '09-30', '10-31', '11-30', '12-31'].map((d) => `2026-${d}`);
    expect(list.status).toBe('expired');
    expect(list.installments.map((i) => [i.installment, i.scheduled_date, i.status, i.attempts.length])).toEqual(dates.map((d, n) => [n + 1, d, 'paid', 1]));
    expect(list.installments.map((i) => i.attempts[0].attempted_at)).toEqual(['2026-01-31T09:00:00Z', ...dates.slice(1).map(midnight)]);
    expect(list.installments.map((i) => i.attempts[0].amount)).toEqual(dates.map((_, n) => (n === 2 ? 4990 : n === 4 ? 1234 : 8990) + 1500));
    expect(list.installments[4]).toMatchObject({ original_scheduled_date: '2026-05-31', original_amount: 8990, amount: 1234 });
    const after = await getSubscription(id, true);
    expect(after).toMatchObject({ status: 'expired', end_date: midnight('2026-12-31'), payment: { order_id: 'PED-2026-000123-12', status: 'approved' } });
    expect(after.next_scheduled_date).toBeUndefined();
    expect(after.floating_data).toEqual([{ installment: 5, new_amount: 1234, new_scheduled_date: '2026-06-10', original_scheduled_date: '2026-05-31', original_amount: 8990 }]);
    const { rows } = await server.store.query<{ n: number }>('SELECT count(*)::int AS n FROM subscription_payments WHERE subscription_id = $1', [id]);
    expect(rows[0]!.n).toBe(12);
  });

  it('advances a year of a monthly plan in well under a second (duration logged)', async () => {
    const plan = await createPlan(server, seller);
    const who = customer();
    const clock = await createClock(server, seller, '2026-02-01T08:00:00Z', [who]);
    await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }));
    await advance(server, clock.test_clock_id, '2027-02-01T08:00:00Z');
    const line = server.logs.lines.find((l) => l.msg === 'Test clock advanced' && l.testClockId === clock.test_clock_id)!;
    console.log(`[billing] one-year advance (11 monthly charges) server time: ${line.durationMs} ms on ${kind}`);
    expect(line.chargesRun).toBe(11);
  });

  it('stops an advance whose caller left, between two charges, and leaves the clock where it was', async () => {
    const plan = await createPlan(server, seller, { period: { type: 'specific', billing_cycle: 1200, specific_cycle_in_days: 1 } });
    const who = customer();
    const clock = await createClock(server, seller, '2026-03-01T12:00:00Z', [who]);
    const id = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }))).subscription.subscription_id;
    const paid = async () => (await charges(server, id)).installments.filter((i) => i.status === 'paid').length;
    // 1 199 daily charges would take seconds; the caller gives up once two are paid.
    const caller = new AbortController();
    const advance = fetch(`${server.url}${CLOCKS}/${clock.test_clock_id}/advance`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ frozen_time: '2029-06-01T12:00:00Z' }),
      signal: caller.signal,
    }).catch((error: Error) => error.name);
    await expect.poll(paid, { timeout: 20_000, interval: 20 }).toBeGreaterThan(1);
    caller.abort();
    expect(await advance).toBe('AbortError');
    await expect.poll(() => server.logs.lines.some((l) => l.msg?.startsWith('Test clock advance stopped') && l.testClockId === clock.test_clock_id), { timeout: 5_000 }).toBe(true);
    const stoppedAt = await paid();
    expect(stoppedAt).toBeLessThan(1200); // stopped midway, not run to its end
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await paid()).toBe(stoppedAt); // nothing more runs
    const read = await server.http.get(`${CLOCKS}/${clock.test_clock_id}`).set('Authorization', ADMIN);
    expect(read.body.frozen_time).toBe('2026-03-01T12:00:00Z');
  });

  it('answers 404 test_clock_not_found, not 500, when a reset() deletes the clock during its advance, and the reset holds (on PostgreSQL it deadlocked with a charge under way)', async () => {
    const own = await startPlatformServer(kind); // reset() empties the whole sandbox: a server of its own
    try {
      const mine = await addSeller(own);
      const plan = await createPlan(own, mine, { period: { type: 'specific', billing_cycle: 1200, specific_cycle_in_days: 1 } });
      const who = customer();
      const clock = await createClock(own, mine, '2026-03-01T12:00:00Z', [who]);
      const id = (await subscribe(own, mine, subscriptionBody(mine, plan, { customer_id: who }))).subscription.subscription_id;
      // 1 199 daily charges take seconds: the reset comes once a few have run.
      const advancing = own.http.post(`${CLOCKS}/${clock.test_clock_id}/advance`).set('Authorization', ADMIN).send({ frozen_time: '2029-06-01T12:00:00Z' }).then((res) => res);
      const paid = async () => Number((await own.store.query<{ n: string }>(`SELECT count(*) AS n FROM subscription_payments WHERE subscription_id = $1`, [id])).rows[0]?.n ?? 0);
      await expect.poll(paid, { timeout: 10_000, interval: 20 }).toBeGreaterThan(3);
      await resetSandbox(own.store);
      const res = await advancing;
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error_code: 'test_clock_not_found', status_code: 404 });
      expect(own.logs.lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('charges a specific plan of 10 days × 6 cycles every 10 days', async () => {
    const plan = await createPlan(server, seller, { period: { type: 'specific', billing_cycle: 6, specific_cycle_in_days: 10 } });
    const who = customer();
    const clock = await createClock(server, seller, '2026-03-01T12:00:00Z', [who]);
    const id = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }))).subscription.subscription_id;
    expect((await advance(server, clock.test_clock_id, '2026-05-01T00:00:00Z')).charges_run).toBe(5);
    const list = await charges(server, id);
    expect(list.installments.map((i) => [i.scheduled_date, i.status])).toEqual(
      ['03-01', '03-11', '03-21', '03-31', '04-10', '04-20'].map((d) => [`2026-${d}`, 'paid']),
    );
    expect(list.status).toBe('expired');
  });

  it('keeps a future start date created until the clock reaches it; the start date is checked on the clock', async () => {
    const plan = await createPlan(server, seller);
    const who = customer();
    const clock = await createClock(server, seller, '2026-01-01T10:00:00Z', [who]);
    const past = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, plan, { customer_id: who, installment_start_date: '2025-12-31' }));
    expect(past.status).toBe(422);
    expect(past.body.message).toBe('installment_start_date must not be in the past');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who, installment_start_date: '2026-01-15' }));
    const id = created.subscription.subscription_id;
    expect(created).toMatchObject({ status: 'created', next_scheduled_date: midnight('2026-01-15') });
    expect(created.payment).toBeUndefined();
    expect((await advance(server, clock.test_clock_id, '2026-01-14T23:59:59Z')).charges_run).toBe(0);
    expect(await getSubscription(id)).toMatchObject({ status: 'created', next_scheduled_date: midnight('2026-01-15') });
    expect((await advance(server, clock.test_clock_id, '2026-01-15T00:00:00Z')).charges_run).toBe(1);
    expect(await getSubscription(id)).toMatchObject({ status: 'success', next_scheduled_date: midnight('2026-02-15'), payment: { status: 'approved' } });
  });

  describe('a denied card', () => {
    let notified: TestSeller;
    beforeAll(async () => {
      notified = await addSeller(server);
      await server.store.query(
        `INSERT INTO web_checkout_configurations (seller_id, primary_color, accent_color, type_face, notification_url, notification_authentication_type, notification_user, sealed_notification_password)
         VALUES ($1, '#0B3B8C', '#F5A623', 'Platform Micro Text', 'http://127.0.0.1:9/hook', 'user_credentials', 'shop', $2)`,
        [notified.sellerId, sealedSecretsOf(server.store).seal('pw', notificationPasswordContext(notified.sellerId))],
      );
    });
    /** The merchant's acquirer answer for one payment, through the subscription webhook. */
    const paymentEvent = (subscriptionId: string, paymentId: string, status: string) =>
      server.http.patch(`${EVENTS}/${subscriptionId}`).set(notified.auth).send({ idempotency_key: randomUUID(), payment_id: paymentId, status });
    const notificationsOf = async (orderId: string) =>
      (
        await server.store.query<{ payload: any; mode: string }>(
          `SELECT payload, mode FROM notification_deliveries WHERE seller_id = $1 AND payload->>'order_id' = $2 ORDER BY created_at, payload->'payment'->'result'->>'transaction_datetime'`,
          [notified.sellerId, orderId],
        )
      ).rows.map((r) => ({ mode: r.mode, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));

    it('refuses to move an installment before the retry of the one before it: the subscription cannot end with that one unpaid', async () => {
      const plan = await createPlan(server, notified, { period: { type: 'monthly', billing_cycle: 2 } });
      const who = customer();
      const clock = await createClock(server, notified, '2030-01-05T09:00:00Z', [who]);
      const created = await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who }, { number_token: 'tok_sandbox_insufficient_funds' }));
      const id = created.subscription.subscription_id;
      await advance(server, clock.test_clock_id, '2030-01-06T12:00:00Z'); // retry 1 denied, retry 2 on 8 January
      expect((await charges(server, id)).installments[0]).toMatchObject({ status: 'retrying', next_attempt_date: '2030-01-08' });
      const move = (date: string) => server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/2`).set(notified.auth).send({ new_scheduled_date: date, new_amount: 0 });
      const before = await move('2030-01-07');
      expect(before.status).toBe(422);
      expect(before.body).toMatchObject({ status_code: 422, message: 'new_scheduled_date must be after today and keep the installments in order' });
      expect((await move('2030-01-09')).status).toBe(200);
      // The clock runs past both: installment 1's last retries fail, and the subscription does not end "expired" without it.
      await advance(server, clock.test_clock_id, '2030-03-01T00:00:00Z');
      const list = await charges(server, id);
      expect(list.status).not.toBe('expired');
      expect(list.installments[0]!.status).not.toBe('retrying');
    });

    it('walks delayed → retries at +1, +3, +5 days → failed, one recurring notification per result', async () => {
      const plan = await createPlan(server, notified);
      const who = customer();
      const clock = await createClock(server, notified, '2026-01-10T09:00:00Z', [who]);
      const orderId = `DEN-${randomUUID().slice(0, 8)}`;
      const created = await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who, order_id: orderId }, { number_token: 'tok_sandbox_insufficient_funds' }));
      const id = created.subscription.subscription_id;
      expect(created).toMatchObject({ status: 'delayed', next_scheduled_date: midnight('2026-01-11'), payment: { status: 'denied' } });
      await advance(server, clock.test_clock_id, '2026-01-12T00:00:00Z');
      expect((await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(notified.auth)).body).toMatchObject({ status: 'delayed', next_scheduled_date: midnight('2026-01-13'), payment: { status: 'denied', credit: { delayed: true } } });
      expect((await advance(server, clock.test_clock_id, '2026-02-01T00:00:00Z')).charges_run).toBe(2);
      const list = await charges(server, id);
      expect(list.status).toBe('failed');
      expect(list.installments[0]!.status).toBe('failed');
      expect(list.installments[0]!.attempts.map((a: any) => [a.attempted_at, a.status, a.delayed])).toEqual([
        ['2026-01-10T09:00:00Z', 'denied', false],
        ['2026-01-11T00:00:00Z', 'denied', true],
        ['2026-01-13T00:00:00Z', 'denied', true],
        ['2026-01-15T00:00:00Z', 'denied', true],
      ]);
      expect(list.installments.slice(1).every((i) => i.status === 'void' && i.attempts.length === 0)).toBe(true);
      const sent = await notificationsOf(orderId);
      expect(sent).toHaveLength(4);
      for (const n of sent) {
        expect(n.mode).toBe('recurring');
        expect(validateCheckoutNotification(n.payload)).toBeTruthy();
        expect(n.payload).toMatchObject({ mode: 'recurring', order_id: orderId, seller: { id: notified.sellerId }, payment: { method: 'credit', amount: 10490, currency: 'BRL', result: { status: 'Denied', return_code: '51' } } });
        expect(n.payload.frontend).toBeUndefined();
      }
      expect(new Set(sent.map((n) => n.payload.payment.result.payment_id)).size).toBe(4);
    });

    it('is suspended when retries run out after a paid installment (a free first installment)', async () => {
      const plan = await createPlan(server, notified, { floating_data: [{ installment: 1, amount: 0 }] });
      const who = customer();
      const clock = await createClock(server, notified, '2026-04-01T09:00:00Z', [who]);
      const orderId = `SUS-${randomUUID().slice(0, 8)}`;
      const created = await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who, order_id: orderId }, { number_token: 'tok_sandbox_insufficient_funds' }));
      expect(created).toMatchObject({ status: 'success', next_scheduled_date: midnight('2026-05-01') });
      expect((await advance(server, clock.test_clock_id, '2026-06-01T00:00:00Z')).charges_run).toBe(4);
      const list = await charges(server, created.subscription.subscription_id);
      expect(list.status).toBe('suspended');
      expect(list.installments[1]!.attempts).toHaveLength(4);
      expect(await notificationsOf(orderId)).toHaveLength(4); // the free installment is no charge
    });

    it('expires a pending charge after 24 h (then retries it); a payment event result is notified too', async () => {
      const plan = await createPlan(server, notified);
      const who = customer();
      const clock = await createClock(server, notified, '2026-05-01T09:00:00Z', [who]);
      const orderId = `PEN-${randomUUID().slice(0, 8)}`;
      const created = await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who, order_id: orderId }, { number_token: 'tok_sandbox_pending' }));
      const id = created.subscription.subscription_id;
      expect(created).toMatchObject({ status: 'processing', payment: { status: 'pending' } });
      expect(created.next_scheduled_date).toBeUndefined();
      expect((await advance(server, clock.test_clock_id, '2026-05-02T08:59:59Z')).charges_run).toBe(0);
      expect(await notificationsOf(orderId)).toHaveLength(0); // pending is no result
      // 24 h after the attempt it expires (Denied notified), and the retry due on 2 May runs right after, pending again.
      expect((await advance(server, clock.test_clock_id, '2026-05-02T12:00:00Z')).charges_run).toBe(2);
      const list = await charges(server, id);
      expect(list.status).toBe('processing');
      expect(list.installments[0]!.attempts.map((a: any) => [a.status, a.attempted_at])).toEqual([
        ['expired', '2026-05-01T09:00:00Z'],
        ['pending', '2026-05-02T09:00:00Z'],
      ]);
      const sent = await notificationsOf(orderId);
      expect(sent.map((n) => validateCheckoutNotification(n.payload).payment.result)).toEqual([
        expect.objectContaining({ status: 'Denied', return_code: 'EX', transaction_datetime: '2026-05-02T09:00:00Z' }),
      ]);
      // The merchant's acquirer answer arrives through the payment event: applied and notified.
      const pending = list.installments[0]!.attempts[1].payment_id;
      const event = await paymentEvent(id, pending, 'APPROVED');
      expect(event.status, JSON.stringify(event.body)).toBe(200);
      expect(event.body).toMatchObject({ payment_status: 'approved', subscription_status: 'success' });
      const after = await notificationsOf(orderId);
      expect(after).toHaveLength(2);
      expect(after.map((n) => n.payload.payment.result.payment_id)).toContain(pending);
    });

    it('applies a payment event on the clock of its subscription: an authorization waits 7 clock days, not real ones', async () => {
      const plan = await createPlan(server, notified);
      const who = customer();
      const clock = await createClock(server, notified, '2030-01-05T09:00:00Z', [who]);
      const created = await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who, order_id: `AUT-${randomUUID().slice(0, 8)}` }, { number_token: 'tok_sandbox_pending' }));
      const id = created.subscription.subscription_id;
      const paymentId = (await charges(server, id)).installments[0]!.attempts[0].payment_id;
      const event = await paymentEvent(id, paymentId, 'AUTHORIZED');
      expect(event.status, JSON.stringify(event.body)).toBe(200);
      expect(event.body).toMatchObject({ payment_status: 'authorized', applied_at: '2030-01-05T09:00:00Z' });
      // A minute later on the clock it is still authorized (it expired at once: its time was real, years before the clock's).
      expect((await advance(server, clock.test_clock_id, '2030-01-05T09:01:00Z')).charges_run).toBe(0);
      expect((await charges(server, id)).installments[0]!.attempts.map((a: any) => a.status)).toEqual(['authorized']);
      // Seven clock days after the authorization, unconfirmed, it expires.
      expect((await advance(server, clock.test_clock_id, '2030-01-12T09:00:01Z')).charges_run).toBeGreaterThanOrEqual(1);
      expect((await charges(server, id)).installments[0]!.attempts[0].status).toBe('expired');
    });

    it('notifies an approved charge as Authorized', async () => {
      const plan = await createPlan(server, notified);
      const who = customer();
      await createClock(server, notified, '2026-04-01T09:00:00Z', [who]);
      const orderId = `OK-${randomUUID().slice(0, 8)}`;
      await subscribe(server, notified, subscriptionBody(notified, plan, { customer_id: who, order_id: orderId }));
      const [sent] = await notificationsOf(orderId);
      expect(validateCheckoutNotification(sent!.payload)).toMatchObject({
        payment: { result: { status: 'Authorized', return_code: '00', transaction_datetime: '2026-04-01T09:00:00Z', authorization_code: expect.stringMatching(/^\d{6}$/) } },
        product: [{ title: 'Clube do Café Mensal', value: 10490, quantity: 1, product_type: 'physical_goods' }],
      });
    });
  });

  it('an inactive plan takes no new subscription while existing ones keep billing', async () => {
    const plan = await createPlan(server, seller);
    const who = customer();
    const clock = await createClock(server, seller, '2026-01-05T09:00:00Z', [who]);
    const id = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }))).subscription.subscription_id;
    expect((await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(seller.auth)).status).toBe(200);
    const refused = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, plan, { customer_id: who }));
    expect(refused.status).toBe(422);
    expect(refused.body.message).toBe('Plan is inactive');
    expect((await advance(server, clock.test_clock_id, '2026-04-05T09:00:00Z')).charges_run).toBe(3);
    expect((await charges(server, id)).installments.filter((i) => i.status === 'paid')).toHaveLength(4);
  });

  it('refuses debit for a Brazilian seller, even on a clock', async () => {
    const debitPlan = await createPlan(server, seller, { payment_types: 'debit_card', status: 'inactive' });
    await server.store.query(`UPDATE plans SET status = 'active' WHERE plan_id = $1`, [debitPlan.plan_id]); // only a back office could
    const who = customer();
    await createClock(server, seller, '2026-01-05T09:00:00Z', [who]);
    const body = subscriptionBody(seller, debitPlan, { customer_id: who });
    body.subscription.payment_type = { debit: { transaction_type: 'FULL', card: body.subscription.payment_type.credit.card } } as never;
    const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(body);
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Debit is not allowed in Brazil');
    expect((await server.store.query('SELECT 1 FROM subscriptions WHERE customer_id = $1', [who])).rowCount).toBe(0);
  });

  it('cancellation stops billing; the sandbox calls answer their errors', async () => {
    const plan = await createPlan(server, seller);
    const who = customer();
    const clock = await createClock(server, seller, '2026-01-05T09:00:00Z', [who]);
    const id = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }))).subscription.subscription_id;
    await advance(server, clock.test_clock_id, '2026-02-10T00:00:00Z');
    const canceled = await server.http.post(`/sandbox/v1/subscriptions/${id}/cancel`).set('Authorization', ADMIN);
    expect({ status: canceled.status, body: canceled.body }).toEqual({ status: 200, body: { subscription_id: id, status: 'canceled', status_details: 'Canceled; 10 of 12 installments were not charged' } });
    expect((await advance(server, clock.test_clock_id, '2027-01-05T09:00:00Z')).charges_run).toBe(0);
    const list = await charges(server, id);
    expect(list.installments.map((i) => i.status)).toEqual([...Array(2).fill('paid'), ...Array(10).fill('void')]);
    expect((await getSubscription(id)).next_scheduled_date).toBeUndefined();

    expectError(await server.http.post(`/sandbox/v1/subscriptions/${id}/cancel`).set('Authorization', ADMIN), 422, { error_code: 'validation_error', message: 'Subscription is already canceled', status_code: 422 });
    const unknown = randomUUID();
    const notFound = { error_code: 'subscription_not_found', message: 'Subscription not found', status_code: 404 };
    expectError(await server.http.post(`/sandbox/v1/subscriptions/${unknown}/cancel`).set('Authorization', ADMIN), 404, notFound);
    expectError(await server.http.get(`/sandbox/v1/subscriptions/${unknown}/charges`).set('Authorization', ADMIN), 404, notFound);
    const clockNotFound = { error_code: 'test_clock_not_found', message: 'Test clock not found', status_code: 404 };
    expectError(await server.http.get(`${CLOCKS}/${unknown}`).set('Authorization', ADMIN), 404, clockNotFound);
    expectError(await server.http.post(`${CLOCKS}/${unknown}/advance`).set('Authorization', ADMIN).send({ frozen_time: '2027-01-01T00:00:00Z' }), 404, clockNotFound);
    expectError(await server.http.post(`${CLOCKS}/${clock.test_clock_id}/advance`).set('Authorization', ADMIN).send({ frozen_time: '2026-01-01T00:00:00Z' }), 422, {
      error_code: 'validation_error',
      message: "frozen_time must not be before the clock's time 2027-01-05T09:00:00Z",
      status_code: 422,
      details: [{ message: 'must not be before 2027-01-05T09:00:00Z', path: 'body.frozen_time' }],
    });
    expectError(await server.http.post(`${CLOCKS}/${clock.test_clock_id}/advance`).set('Authorization', ADMIN).send({ frozen_time: '2033-01-01T00:00:00Z' }), 422, {
      error_code: 'validation_error',
      message: "frozen_time must be at most 5 years after the clock's time 2027-01-05T09:00:00Z",
      status_code: 422,
      details: [{ message: 'must not be after 2032-01-05T09:00:00Z', path: 'body.frozen_time' }],
    });
    const again = await server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: seller.sellerId, frozen_time: '2026-01-01T00:00:00Z', customer_ids: ['X1', who] });
    expectError(again, 422, {
      error_code: 'validation_error',
      message: `customer ${who} is already attached to test clock ${clock.test_clock_id}`,
      status_code: 422,
      details: [{ message: `already attached to test clock ${clock.test_clock_id}`, path: 'body.customer_ids.1' }],
    });
    expectError(await server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: randomUUID(), frozen_time: '2026-01-01T00:00:00Z', customer_ids: ['X2'] }), 404, {
      error_code: 'seller_not_found',
      message: 'Seller not found',
      status_code: 404,
    });
    const unauthorized = await server.http.get(`${CLOCKS}/${clock.test_clock_id}`);
    expect(unauthorized.status).toBe(401);
    const read = await server.http.get(`${CLOCKS}/${clock.test_clock_id}`).set('Authorization', ADMIN);
    expect(read.body).toEqual({
      test_clock_id: clock.test_clock_id,
      seller_id: seller.sellerId,
      name: 'clock',
      frozen_time: '2027-01-05T09:00:00Z',
      customer_ids: [who],
      subscription_ids: [id],
      created_at: expect.stringMatching(/Z$/),
    });
  });

  it('ten clocks created at once for one customer: one is created, the other nine are the 422 naming it', async () => {
    const who = customer();
    const others = Array.from({ length: 10 }, customer);
    const answers = await Promise.all(
      others.map((other) => server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: seller.sellerId, frozen_time: '2026-01-01T00:00:00Z', customer_ids: [other, who] })),
    );
    const created = answers.filter((r) => r.status === 201);
    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(422)]);
    const winner = created[0]!.body as { test_clock_id: string; customer_ids: string[] };
    for (const refused of answers.filter((r) => r.status === 422)) {
      expect(refused.body).toMatchObject({ message: `customer ${who} is already attached to test clock ${winner.test_clock_id}`, details: [{ path: 'body.customer_ids.1' }] });
    }
    // The refused clocks left nothing behind: their first customers are free for a new clock.
    const free = others.filter((other) => other !== winner.customer_ids[0]);
    expect((await createClock(server, seller, '2026-01-01T00:00:00Z', free)).test_clock_id).toBeTruthy();
  });

  it('bills real-time subscriptions with the worker, and leaves the clocks alone', async () => {
    const plan = await createPlan(server, seller);
    const realCustomer = customer();
    const real = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: realCustomer }))).subscription.subscription_id;
    const onClock = customer();
    await createClock(server, seller, '2026-01-05T09:00:00Z', [onClock]);
    const clocked = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: onClock }))).subscription.subscription_id;
    const inTwoMonths = new Date(Date.now() + 62 * 86_400_000);
    const worker = createBillingWorker({ store: server.store, logger: (await import('pino')).pino({ level: 'silent' }), pollIntervalMs: 60_000, now: () => inTwoMonths });
    expect(await worker.tick()).toBeGreaterThanOrEqual(2);
    expect((await charges(server, real)).installments.filter((i) => i.status === 'paid').length).toBeGreaterThanOrEqual(3);
    expect((await charges(server, clocked)).installments.filter((i) => i.status === 'paid')).toHaveLength(1);
  });
});

describe.skipIf(!DATABASE_URL)('two instances on one PostgreSQL advance one clock at once', () => {
  it('charges every installment exactly once', async () => {
    const open = await freshPostgresSchema();
    const a = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await open() });
    const b = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await open() });
    try {
      const seller = await addSeller(a);
      const plan = await createPlan(a, seller);
      const customers = Array.from({ length: 8 }, customer);
      const clock = await createClock(a, seller, '2026-01-05T09:00:00Z', customers);
      for (const who of customers) await subscribe(a, seller, subscriptionBody(seller, plan, { customer_id: who }));
      const [ra, rb] = await Promise.all([advance(a, clock.test_clock_id, '2027-01-05T09:00:00Z'), advance(b, clock.test_clock_id, '2027-01-05T09:00:00Z')]);
      expect(ra.charges_run + rb.charges_run).toBe(8 * 11);
      const { rows } = await a.store.query<{ n: number; installments: number; max: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT (subscription_id, installment))::int AS installments,
                (SELECT max(c)::int FROM (SELECT count(*) AS c FROM subscription_payments GROUP BY subscription_id, installment) x) AS max
           FROM subscription_payments`,
      );
      expect(rows[0]).toEqual({ n: 96, installments: 96, max: 1 });
    } finally {
      await b.close();
      await a.close();
    }
  });
});

describe.skipIf(!DATABASE_URL)('the charge list of a subscription during a billing transaction (PostgreSQL)', () => {
  it('answers the state the transaction commits, never a mix of before and after', async () => {
    const open = await freshPostgresSchema();
    const server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE }, store: await open() });
    try {
      const seller = await addSeller(server);
      const plan = await createPlan(server, seller);
      const who = customer();
      await createClock(server, seller, '2026-01-05T09:00:00Z', [who]);
      const id = (await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: who }))).subscription.subscription_id;
      let read: Promise<Awaited<ReturnType<typeof charges>>> | undefined;
      // What a cancellation does, in the order it does it: installments first, then the subscription.
      await server.store.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM subscriptions WHERE subscription_id = $1 FOR UPDATE', [id]);
        await tx.query(`UPDATE subscription_installments SET status = 'void', next_attempt_on = NULL WHERE subscription_id = $1 AND status = 'scheduled'`, [id]);
        read = charges(server, id);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.query(`UPDATE subscriptions SET status = 'canceled' WHERE subscription_id = $1`, [id]);
      });
      const list = await read!;
      expect(list.status).toBe('canceled');
      expect(list.installments.map((i) => i.status)).toEqual(['paid', ...Array(11).fill('void')]);
    } finally {
      await server.close();
    }
  });
});
