// Subscription webhook over HTTP: applySubscriptionEvent moves a payment and its subscription once
// per idempotency key (per seller), replays byte for byte, refuses reuse and disallowed moves, and
// is safe under concurrent calls with one key.
import { startPlatformServer } from './support/server.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './support/server.ts';
import { addSeller, createPlan, dateFromToday, EVENTS, expectError, STORES, subscribe, subscriptionBody, SUBSCRIPTIONS, type TestSeller } from './support/recurrence.ts';

describe.each(STORES)('subscription payment events on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  let other: TestSeller;
  let plan: Record<string, any>;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    [seller, other] = [await addSeller(server), await addSeller(server)];
    plan = await createPlan(server, seller);
  });
  afterAll(() => server?.close());

  const pending = () => subscribe(server, seller, subscriptionBody(seller, plan, {}, { number_token: 'tok_sandbox_pending' }));
  const send = (who: TestSeller, subscriptionId: string, body: Record<string, unknown>) => server.http.patch(`${EVENTS}/${subscriptionId}`).set(who.auth).send(body);
  const paymentStatus = async (paymentId: string) =>
    (await server.store.query<{ status: string }>('SELECT status FROM subscription_payments WHERE payment_id = $1', [paymentId])).rows[0]!.status;

  it('approves a pending charge: 200 with the new statuses; the subscription is success', async () => {
    const created = await pending();
    const id = created.subscription.subscription_id;
    const key = randomUUID();
    const res = await send(seller, id, { idempotency_key: key, payment_id: created.payment.payment_id, status: 'APPROVED' });
    expect(res.status).toBe(200);
    const read = await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(seller.auth);
    expect(res.body).toEqual({
      event_name: 'payment',
      event_id: id,
      idempotency_key: key,
      payment_id: created.payment.payment_id,
      status: 'APPROVED',
      installment: 1,
      payment_status: 'approved',
      subscription_status: 'success',
      next_scheduled_date: read.body.next_scheduled_date,
      applied_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
    });
    expect(read.body).toMatchObject({
      status: 'success',
      status_details: 'Installment 1 of 12 paid',
      payment: { status: 'approved', credit: { reason_code: '00', authorization_code: expect.stringMatching(/^\d{6}$/), delayed: false } },
    });
    expect(read.body.payment.payment_received_timestamp).toEqual(expect.any(String));
  });

  it('replays the first 200 byte for byte for the same key and event, with no second effect', async () => {
    const created = await pending();
    const id = created.subscription.subscription_id;
    const body = { idempotency_key: randomUUID(), payment_id: created.payment.payment_id, status: 'DENIED' };
    const first = await send(seller, id, body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ payment_status: 'denied', subscription_status: 'delayed', next_scheduled_date: `${dateFromToday(1)}T00:00:00Z` });
    // The state moves on (a refund-like event is not possible from denied; move it by hand) and the replay still answers the first 200.
    await server.store.query(`UPDATE subscriptions SET status = 'canceled' WHERE subscription_id = $1`, [id]);
    const again = await send(seller, id, body);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(await paymentStatus(created.payment.payment_id)).toBe('denied');
  });

  it('answers 409 for the same key with a different event, changing nothing', async () => {
    const created = await pending();
    const id = created.subscription.subscription_id;
    const key = randomUUID();
    await send(seller, id, { idempotency_key: key, payment_id: created.payment.payment_id, status: 'AUTHORIZED' }).expect(200);
    const res = await send(seller, id, { idempotency_key: key, payment_id: created.payment.payment_id, status: 'CONFIRMED' });
    expectError(res, 409, { message: 'Idempotency key already used with a different request', name: 'dpm-webhooks', status_code: 409, combined_id: id, seller_id: seller.sellerId });
    expect(await paymentStatus(created.payment.payment_id)).toBe('authorized');
  });

  it('scopes keys to the seller: another seller may use the same key', async () => {
    const key = randomUUID();
    const mine = await pending();
    await send(seller, mine.subscription.subscription_id, { idempotency_key: key, payment_id: mine.payment.payment_id, status: 'APPROVED' }).expect(200);
    const otherPlan = await createPlan(server, other);
    const theirs = await subscribe(server, other, subscriptionBody(other, otherPlan, {}, { number_token: 'tok_sandbox_pending' }));
    const res = await send(other, theirs.subscription.subscription_id, { idempotency_key: key, payment_id: theirs.payment.payment_id, status: 'DENIED' });
    expect(res.status).toBe(200);
    expect(res.body.payment_status).toBe('denied');
  });

  it('serialises concurrent calls with one key: one effect, every answer the same 200', async () => {
    const created = await pending();
    const body = { idempotency_key: randomUUID(), payment_id: created.payment.payment_id, status: 'APPROVED' };
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(seller, created.subscription.subscription_id, body)));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const stored = await server.store.query('SELECT 1 FROM subscription_events WHERE seller_id = $1 AND idempotency_key = $2', [seller.sellerId, body.idempotency_key]);
    expect(stored.rowCount).toBe(1);
  });

  it('answers 422 for a move the payment state machine does not allow, with the payment, and does not consume the key', async () => {
    const created = await pending();
    const id = created.subscription.subscription_id;
    const paymentId = created.payment.payment_id;
    await send(seller, id, { idempotency_key: randomUUID(), payment_id: paymentId, status: 'DENIED' }).expect(200);
    const key = randomUUID();
    const res = await send(seller, id, { idempotency_key: key, payment_id: paymentId, status: 'APPROVED' });
    expectError(res, 422, {
      message: 'Invalid payment status transition',
      name: 'dpm-webhooks',
      status_code: 422,
      combined_id: id,
      order_id: 'PED-2026-000123',
      seller_id: seller.sellerId,
      payments: [
        {
          status: 'denied',
          description: 'denied cannot move to approved',
          brand: 'Visa',
          payment_id: paymentId,
          seller_id: seller.sellerId,
          amount: '10490',
          currency: 'BRL',
          order_id: 'PED-2026-000123-1',
          payment_tag: '1',
          acquirer_transaction_id: expect.any(String),
          transaction_id: expect.any(String),
          reason_code: '05',
          reason_message: 'Do not honor',
        },
      ],
    });
    expect((await server.store.query('SELECT 1 FROM subscription_events WHERE idempotency_key = $1', [key])).rowCount).toBe(0);
  });

  it('refunds a paid charge (CANCELED) without changing the subscription', async () => {
    const created = await subscribe(server, seller, subscriptionBody(seller, plan));
    const res = await send(seller, created.subscription.subscription_id, { idempotency_key: randomUUID(), payment_id: created.payment.payment_id, status: 'CANCELED' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ payment_status: 'canceled', subscription_status: 'success', next_scheduled_date: created.next_scheduled_date });
    const read = await server.http.get(`${SUBSCRIPTIONS}/${created.subscription.subscription_id}`).set(seller.auth);
    expect(read.body).toMatchObject({ status: 'success', payment: { status: 'canceled', credit: { reason_code: 'CN' } } });
  });

  it("answers 404 Signature not found for an unknown subscription and another seller's, Payment not found for a foreign payment", async () => {
    const created = await pending();
    const id = created.subscription.subscription_id;
    const body = { idempotency_key: randomUUID(), payment_id: created.payment.payment_id, status: 'APPROVED' };
    expectError(await send(other, id, body), 404, { message: 'Signature not found', name: 'dpm-webhooks', status_code: 404, combined_id: id, seller_id: other.sellerId });
    const unknown = randomUUID();
    expectError(await send(seller, unknown, { ...body, idempotency_key: randomUUID() }), 404, {
      message: 'Signature not found',
      name: 'dpm-webhooks',
      status_code: 404,
      combined_id: unknown,
      seller_id: seller.sellerId,
    });
    expectError(await send(seller, id, { ...body, idempotency_key: randomUUID(), payment_id: randomUUID() }), 404, {
      message: 'Payment not found',
      name: 'dpm-webhooks',
      status_code: 404,
      combined_id: id,
      order_id: 'PED-2026-000123',
      seller_id: seller.sellerId,
    });
    expect(await paymentStatus(created.payment.payment_id)).toBe('pending');
    // The key the other seller used is not consumed for this seller.
    await send(seller, id, body).expect(200);
  });

  it('answers 400 for a lower-case status, another event name or a missing field; 401 without a token', async () => {
    const id = randomUUID();
    const lower = await send(seller, id, { idempotency_key: randomUUID(), payment_id: randomUUID(), status: 'approved' });
    expect(lower.status).toBe(400);
    expect(lower.body).toMatchObject({ message: 'Invalid request', name: 'dpm-webhooks', status_code: 400, details: [{ error_code: 'unknown_value', description_detail: '/status' }] });
    const name = await server.http.patch(`/dpm/webhooks/v1/subscriptions/refund/events/${id}`).set(seller.auth).send({ idempotency_key: randomUUID(), payment_id: randomUUID(), status: 'APPROVED' });
    expect(name.status).toBe(400);
    expect((await send(seller, id, { payment_id: randomUUID(), status: 'APPROVED' })).status).toBe(400);
    const res = await server.http.patch(`${EVENTS}/${id}`).send({ idempotency_key: randomUUID(), payment_id: randomUUID(), status: 'APPROVED' });
    expectError(res, 401, { message: 'Unauthorized', name: 'dpm-webhooks', status_code: 401 });
  });
});
