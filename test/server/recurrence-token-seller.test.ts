// A token whose x-seller-id is not a GUID (this server never issues one; a token signed elsewhere
// with its key might): the recurrence areas answer 400 in their own error shape, as payment link
// and web checkout answer guid_error, instead of passing it to SQL and answering 500.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startPlatformServer, type TestServer } from './support/server.ts';
import { addSeller, createPlan, EVENTS, PLANS, STORES, subscribe, subscriptionBody, SUBSCRIPTIONS, type TestSeller } from './support/recurrence.ts';

const NOT_A_GUID = 'not-a-guid';

describe.each(STORES)('recurrence calls with a token whose seller id is not a GUID, on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  let forged: { Authorization: string };
  let plan: Record<string, any>;
  let subscriptionId: string;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    seller = await addSeller(server);
    plan = await createPlan(server, seller);
    subscriptionId = (await subscribe(server, seller, subscriptionBody(seller, plan))).subscription.subscription_id;
    forged = { Authorization: `Bearer ${await mintToken(server, NOT_A_GUID)}` };
  });
  afterAll(() => server?.close());

  const calls = () => [
    ['be-subscription', server.http.post(SUBSCRIPTIONS).set(forged).send(subscriptionBody(seller, plan, { seller_id: seller.sellerId }))],
    ['be-subscription', server.http.get(`${SUBSCRIPTIONS}/${subscriptionId}`).set(forged)],
    ['be-subscription', server.http.put(`${SUBSCRIPTIONS}/${subscriptionId}/floating/installment/2`).set(forged).send({ new_amount: 1000 })],
    ['be-plan', server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(forged)],
    ['dpm-webhooks', server.http.patch(`${EVENTS}/${subscriptionId}`).set(forged).send({ idempotency_key: randomUUID(), payment_id: randomUUID(), status: 'APPROVED' })],
  ] as const;

  it('answers each 400 in the area shape, without echoing the id, and changes nothing', async () => {
    for (const [name, call] of calls()) {
      const res = await call;
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body).toEqual({ message: 'The seller id must be a valid GUID', name, status_code: 400 });
      expect(JSON.stringify(res.body)).not.toContain(NOT_A_GUID);
    }
    // The seller's own plan and subscription are as they were.
    const own = await server.http.get(`${SUBSCRIPTIONS}/${subscriptionId}`).set(seller.auth);
    expect(own.status).toBe(200);
    expect(own.body.plan).toMatchObject({ plan_id: plan.plan_id, status: 'active' });
    expect(server.logs.lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
