// Dates and instants outside years 1000-9999 (server/http/formats.ts): PostgreSQL refuses year
// 0 (a 500 before), JavaScript reads years 0-99 as 1900-1999 (a clock set in 0049 came back in
// 2049), and a schedule running past 9999 could not be answered (a 500, with the subscription
// stored). Each is now refused in its area's shape, and nothing is stored.
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { PLATFORM_DATE_FORMATS } from '../../server/http/formats.ts';
import { ADMIN, startPlatformServer, type TestServer } from './support/server.ts';
import { addSeller, createPlan, STORES, subscriptionBody, SUBSCRIPTIONS, type TestSeller } from './support/recurrence.ts';

const CLOCKS = '/sandbox/v1/test-clocks';

describe('the date formats', () => {
  it.each([
    ['date', '1000-01-01', true],
    ['date', '9999-12-31', true],
    ['date', '0999-12-31', false],
    ['date', '0000-01-01', false],
    ['date-time', '2026-11-23T10:00:00Z', true],
    ['date-time', '1000-01-01T00:00:00Z', true],
    ['date-time', '9999-12-31T23:59:59.999Z', true],
    ['date', '2027-02-29', false],
    ['date', '2028-02-29', true],
    ['date', '2027-19-39', false],
    ['date', '2027-00-00', false],
    ['date-time', '2026-12-31T23:59:60Z', false], // a leap second: JavaScript cannot read it
    ['date-time', '2026-02-31T00:00:00Z', false], // was read as 3 March
    ['date-time', '2026-01-01T29:00:00Z', false],
    ['date-time', '2026-06-01T10:00:00+01', false], // an hour-only offset JavaScript cannot read
    ['date-time', '2026-06-01T10:00:00+01:00', true],
    ['date-time', '2026-06-01t10:00:00z', true],
    ['date-time', '0049-01-01T00:00:00Z', false],
    ['date-time', '1000-01-01T00:00:00+01:00', false], // 0999-12-31T23:00Z
    ['date-time', '9999-12-31T23:59:59-01:00', false], // 10000-01-01T00:59:59Z
    ['date-time', '2026-11-23', false],
    // Over 64 characters a date-time is not looked at (its check split 1 MiB of spaces into ~1 M strings):
    // 64 are read, 65 are refused, however well formed (the contract's maxLength is 40 anyway).
    ['date-time', `2026-11-23T10:00:00.${'0'.repeat(43)}Z`, true],
    ['date-time', `2026-11-23T10:00:00.${'0'.repeat(44)}Z`, false],
  ] as const)('%s %s: %s', (format, value, valid) => {
    expect(PLATFORM_DATE_FORMATS[format].validate(value)).toBe(valid);
  });
});

describe.each(STORES)('dates at the edges of the years the platform stores, on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    seller = await addSeller(server);
  });
  afterAll(() => server?.close());

  const clock = (frozenTime: string, customerIds: string[] = ['11144477735']) =>
    server.http.post(CLOCKS).set('Authorization', ADMIN).send({ seller_id: seller.sellerId, name: 'edge', frozen_time: frozenTime, customer_ids: customerIds });
  const subscriptionsOfSeller = async () =>
    (await server.store.query<{ n: number }>('SELECT count(*)::int AS n FROM subscriptions WHERE seller_id = $1', [seller.sellerId])).rows[0]!.n;

  it('a list filter in year 0 is a 400 of the payment link area', async () => {
    const res = await server.http.get('/dpy/payment-link/v1/payment-links?created_at_start=0000-01-01T00:00:00Z').set(seller.auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error_code: 'invalid_request',
      message: 'Invalid request',
      status_code: 400,
      details: [{ message: 'created_at_start must match format "date-time"', path: 'query.created_at_start' }],
    });
  });

  it('a date-time of 1 MiB of spaces is a 400 naming the field, as any too long (re-attack review: its format check held the event loop ~0.3 s)', async () => {
    const res = await clock(' '.repeat(1_048_000));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
    expect(res.body.details).toEqual([{ message: 'frozen_time must NOT have more than 40 characters', path: 'body.frozen_time' }]);
  });

  it('a test clock in years 0-999 or past 9999 is refused; at the edges it reads back as set', async () => {
    for (const frozen of ['0000-06-01T00:00:00Z', '0049-01-01T00:00:00Z', '0999-12-31T23:59:59Z', '9999-12-31T23:59:59-01:00']) {
      const res = await clock(frozen);
      expect(res.status, frozen).toBe(400);
      expect(JSON.stringify(res.body)).toContain('frozen_time');
    }
    for (const [frozen, customer] of [['1000-01-01T00:00:00Z', '39053344705'], ['9999-12-31T23:59:59Z', '86288366757']]) {
      const created = await clock(frozen!, [customer!]); // a customer is on one clock at most
      expect(created.status, frozen).toBe(201);
      const read = await server.http.get(`${CLOCKS}/${created.body.test_clock_id}`).set('Authorization', ADMIN);
      expect(read.status).toBe(200);
      expect(read.body.frozen_time).toBe(frozen);
    }
  });

  it('a denied charge near 9999-12-31 is retried only within the years: then billing stops, and the clock still advances', async () => {
    const plan = await createPlan(server, seller, { period: { type: 'monthly', billing_cycle: 1 } });
    const customer = '71428793860';
    const created = await clock('9999-12-29T10:00:00Z', [customer]);
    expect(created.status).toBe(201);
    const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, plan, { customer_id: customer }, { number_token: 'tok_sandbox_insufficient_funds' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'delayed', next_scheduled_date: '9999-12-30T00:00:00Z' });
    // The retry of 9999-12-30 fails too; the next (+3 days) would be 10000-01-01: none is left.
    const advanced = await server.http.post(`${CLOCKS}/${created.body.test_clock_id}/advance`).set('Authorization', ADMIN).send({ frozen_time: '9999-12-31T23:59:59Z' });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect(advanced.body).toMatchObject({ charges_run: 1, frozen_time: '9999-12-31T23:59:59Z' });
    const got = await server.http.get(`${SUBSCRIPTIONS}/${res.body.subscription.subscription_id}`).set(seller.auth);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: 'failed', payment: { status: 'denied' } });
    expect(got.body.next_scheduled_date).toBeUndefined();
  });

  it('a subscription whose schedule would run past 9999 is a 422, and nothing is stored', async () => {
    const monthly = await createPlan(server, seller);
    const longCycles = await createPlan(server, seller, { period: { type: 'specific', billing_cycle: 2, specific_cycle_in_days: 3_000_000 } });
    // Past what a JavaScript Date holds (±273 790 years): a 422 too, not a 500 (attacker review).
    const beyondDates = await createPlan(server, seller, { period: { type: 'specific', billing_cycle: 2, specific_cycle_in_days: 2_147_483_647 } });
    expect((await clock('2026-01-10T09:00:00Z', ['52998224725'])).status).toBe(201);
    const before = await subscriptionsOfSeller();
    for (const [plan, start] of [[monthly, '9999-06-01'], [longCycles, undefined], [beyondDates, undefined]] as const) {
      const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, plan, start ? { installment_start_date: start } : {}));
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body).toMatchObject({ message: "The plan's installments from this start date would run past 9999-12-31", name: 'be-subscription', status_code: 422 });
    }
    expect(await subscriptionsOfSeller()).toBe(before);
    // The last start that fits: 12 monthly installments from 9999-01-01 end on 9999-12-01.
    const fits = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, monthly, { installment_start_date: '9999-01-01' }));
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect(fits.body).toMatchObject({ end_date: '9999-12-01T00:00:00Z', status: 'created' });
  });
});
