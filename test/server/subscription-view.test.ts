// GET subscription reads a subscription, its plan, installments and latest payment in one statement
// (subscriptionRepository's findSubscriptionView). It must give exactly what the four reads of
// their own give, value for value and type for type (Dates stay Dates, numbers numbers), on
// subscriptions in every shape: charged month after month with a floating installment, denied and
// retried, not started yet (no payment), on a clock in 1800, and another seller's. On PostgreSQL, each
// in a session on UTC and on São Paulo's time zone, whose offsets before 1914 carry seconds
// (`-03:06:28`): an instant read through JSON as text in that zone would not parse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planRepository } from '../../server/plan/repository.ts';
import type { Store } from '../../server/store/store.ts';
import { subscriptionRepository, type SubscriptionView } from '../../server/subscription/repository.ts';
import { ADMIN, startTestServer, type TestServer } from './support/server.ts';
import { freshPostgresSchema, openTestStore } from './support/stores.ts';
import { addSeller, createPlan, STORES, subscribe, subscriptionBody, SUBSCRIPTIONS, type TestSeller } from './support/recurrence.ts';

const CLOCKS = '/sandbox/v1/test-clocks';
const ZONES = ['UTC', 'America/Sao_Paulo'];

/** A store whose sessions run in `timeZone` (PostgreSQL) or PGlite as the sandbox opens it. */
async function storeInZone(kind: 'pglite' | 'postgres', timeZone: string): Promise<Store> {
  return kind === 'postgres' ? (await freshPostgresSchema({ timeZone }))() : openTestStore({});
}

// PGlite's one session is always on UTC (the sandbox never changes it); a PostgreSQL server's
// sessions are on whatever zone its configuration says.
const CASES = STORES.flatMap((kind) => (kind === 'postgres' ? ZONES : ['UTC']).map((zone) => [kind, zone] as const));

describe.each(CASES)('one read of a subscription and what its GET answers, on %s in %s', (kind, zone) => {
  let server: TestServer;
  let seller: TestSeller;
  let other: TestSeller;
  beforeAll(async () => {
    server = await startTestServer({ store: await storeInZone(kind, zone) });
    expect((await server.store.query<{ zone: string }>('SELECT current_setting($1) AS zone', ['TimeZone'])).rows[0]!.zone).toBe(zone);
    seller = await addSeller(server);
    other = await addSeller(server);
  });
  afterAll(() => server?.close());

  async function clockFor(customerId: string, frozenTime: string): Promise<string> {
    const res = await server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: seller.sellerId, name: 'view', frozen_time: frozenTime, customer_ids: [customerId] });
    expect(res.status).toBe(201);
    return res.body.test_clock_id;
  }
  async function advance(clockId: string, frozenTime: string): Promise<void> {
    const res = await server.http.post(`${CLOCKS}/${clockId}/advance`).set('Authorization', ADMIN).send({ frozen_time: frozenTime });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** The four reads GET subscription made before, one by one. */
  async function separately(sellerId: string, subscriptionId: string): Promise<SubscriptionView | undefined> {
    const repo = subscriptionRepository(server.store);
    const subscription = await repo.findSubscription(sellerId, subscriptionId);
    if (!subscription) return undefined;
    const plan = await planRepository(server.store).findPlan(sellerId, subscription.planId);
    const payment = await repo.latestPayment(subscriptionId);
    return { subscription, ...(plan ? { plan } : {}), installments: await repo.listInstallments(subscriptionId), ...(payment ? { payment } : {}) };
  }

  async function expectSameView(subscriptionId: string): Promise<SubscriptionView> {
    const view = await subscriptionRepository(server.store).findSubscriptionView(seller.sellerId, subscriptionId);
    expect(view).toStrictEqual(await separately(seller.sellerId, subscriptionId));
    return view!;
  }

  it('a subscription charged month after month, with a floating installment and a changed one', async () => {
    const plan = await createPlan(server, seller, { floating_data: [{ installment: 3, amount: 4990 }] });
    const clock = await clockFor('52998224725', '2026-01-31T09:00:00Z');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan));
    const id = created.subscription.subscription_id;
    const put = await server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/5`).set(seller.auth).send({ new_amount: 1234, new_scheduled_date: '2026-06-10' });
    expect(put.status).toBe(200);
    await advance(clock, '2026-04-01T00:00:00Z');

    const view = await expectSameView(id);
    expect(view.installments.map((i) => [i.installment, i.status, i.amount, i.floating])).toEqual([
      [1, 'paid', 8990, false],
      [2, 'paid', 8990, false],
      [3, 'paid', 4990, false], // the plan's floating amount; `floating` marks a changed installment
      [4, 'scheduled', 8990, false],
      [5, 'scheduled', 1234, true],
      ...[6, 7, 8, 9, 10, 11, 12].map((n) => [n, 'scheduled', 8990, false]),
    ]);
    expect(view.installments[4]).toMatchObject({ scheduledDate: '2026-06-10', originalScheduledDate: '2026-05-31', originalAmount: 8990 });
    expect(view.payment).toMatchObject({ installment: 3, attempt: 1, status: 'approved', currency: 'BRL', delayed: false });
    expect(view.payment!.createdAt).toBeInstanceOf(Date);
    expect(view.payment!.paymentReceivedTimestamp).toBeInstanceOf(Date);
    expect(view.payment!.acquirerResult).toMatchObject({ brand: 'Visa' });
    expect(view.plan).toMatchObject({ plan_id: plan.plan_id, create_date: plan.create_date, floating_data: [{ installment: 3, amount: 4990 }] });
    expect(view.subscription.createDate).toBeInstanceOf(Date);

    // What GET answers is built from this read.
    const got = await server.http.get(`${SUBSCRIPTIONS}/${id}?expand=floating_data`).set(seller.auth);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: 'success', next_scheduled_date: '2026-04-30T00:00:00Z', plan: { plan_id: plan.plan_id }, payment: { status: 'approved' } });
    expect(got.body.floating_data).toEqual([
      { installment: 5, new_amount: 1234, new_scheduled_date: '2026-06-10', original_scheduled_date: '2026-05-31', original_amount: 8990 },
    ]);
  });

  it('a denied charge retried: the latest payment is the last attempt', async () => {
    const plan = await createPlan(server, seller);
    const clock = await clockFor('11144477735', '2026-01-10T09:00:00Z');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: '11144477735' }, { number_token: 'tok_sandbox_insufficient_funds' }));
    await advance(clock, '2026-01-14T00:00:00Z');
    const view = await expectSameView(created.subscription.subscription_id);
    expect(view.payment).toMatchObject({ installment: 1, attempt: 3, status: 'denied', delayed: true });
    expect(view.payment!.paymentReceivedTimestamp).toEqual(new Date('2026-01-13T00:00:00Z'));
  });

  it('a pending charge: a payment with no received time', async () => {
    const plan = await createPlan(server, seller);
    await clockFor('86288366757', '2026-05-01T09:00:00Z');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: '86288366757' }, { number_token: 'tok_sandbox_pending' }));
    const view = await expectSameView(created.subscription.subscription_id);
    expect(view.payment).toMatchObject({ installment: 1, attempt: 1, status: 'pending', paymentReceivedTimestamp: null });
    expect(view.subscription.status).toBe('processing');
  });

  it('a subscription that starts later: no payment yet', async () => {
    const plan = await createPlan(server, seller);
    await clockFor('39053344705', '2026-01-10T09:00:00Z');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: '39053344705', installment_start_date: '2026-03-01' }));
    const view = await expectSameView(created.subscription.subscription_id);
    expect(view).not.toHaveProperty('payment');
    expect(view.installments).toHaveLength(12);
    expect(view.subscription.installmentStartDate).toBe('2026-03-01');
  });

  it('a subscription on a clock in 1800: its instants come back whole', async () => {
    const plan = await createPlan(server, seller);
    await clockFor('15350946056', '1800-01-01T12:00:00Z');
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: '15350946056' }));
    expect(created).toMatchObject({ create_date: '1800-01-01T12:00:00Z', payment: { status: 'approved' } });
    const view = await expectSameView(created.subscription.subscription_id);
    expect(view.payment!.createdAt).toEqual(new Date('1800-01-01T12:00:00Z'));
    expect(view.subscription.createDate).toEqual(new Date('1800-01-01T12:00:00Z'));
    const got = await server.http.get(`${SUBSCRIPTIONS}/${created.subscription.subscription_id}`).set(seller.auth);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ create_date: '1800-01-01T12:00:00Z', plan: { plan_id: plan.plan_id, create_date: plan.create_date } });
  });

  it("another seller's subscription, or none: nothing, and GET answers the same 404", async () => {
    const plan = await createPlan(server, seller);
    const created = await subscribe(server, seller, subscriptionBody(seller, plan, { customer_id: '71428793860' }));
    const id = created.subscription.subscription_id;
    const repo = subscriptionRepository(server.store);
    expect(await repo.findSubscriptionView(other.sellerId, id)).toBeUndefined();
    expect(await repo.findSubscriptionView(seller.sellerId, '6f0e1c1e-0000-4000-8000-000000000000')).toBeUndefined();
    const res = await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(other.auth);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ message: 'Signature not found' });
  });
});
