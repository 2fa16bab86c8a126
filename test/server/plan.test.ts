// Plans: createSandboxPlan (sandbox area) and updatePlanStatus (plan API), every status each can
// answer, the stored state after each call, and seller isolation.
import { ADMIN, startPlatformServer } from './support/server.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { debitPlanBlockedInBrazil } from '../../server/plan/service.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { planFloatingData } from '../../server/sandbox/plans/service.ts';
import type { TestServer } from './support/server.ts';
import { addSeller, auditOf, createPlan, expectError, PLANS, planBody, STORES, type TestSeller } from './support/recurrence.ts';

describe('debitPlanBlockedInBrazil', () => {
  it('blocks only an active debit plan of a BR seller', () => {
    expect(debitPlanBlockedInBrazil({ payment_types: 'debit_card' }, 'active', 'BR')).toBe(true);
    expect(debitPlanBlockedInBrazil({ payment_types: 'debit_card' }, 'inactive', 'BR')).toBe(false);
    expect(debitPlanBlockedInBrazil({ payment_types: 'debit_card' }, 'active', 'AR')).toBe(false);
    expect(debitPlanBlockedInBrazil({ payment_types: 'credit_card' }, 'active', 'BR')).toBe(false);
  });
});

describe('planFloatingData', () => {
  const body = (floating_data: Array<{ installment: number; amount?: number }>) =>
    ({ amount: 100, period: { type: 'monthly', billing_cycle: 3 }, floating_data }) as Parameters<typeof planFloatingData>[0];
  it('sorts entries and fills a missing amount with the plan amount', () => {
    expect(planFloatingData(body([{ installment: 3, amount: 0 }, { installment: 1 }]))).toEqual([
      { installment: 1, amount: 100 },
      { installment: 3, amount: 0 },
    ]);
  });
  it('refuses an installment outside the cycle or given twice', () => {
    expect(() => planFloatingData(body([{ installment: 4, amount: 1 }]))).toThrow(/outside the billing cycle/);
    expect(() => planFloatingData(body([{ installment: 2, amount: 1 }, { installment: 2, amount: 2 }]))).toThrow(/twice/);
  });
});

describe.each(STORES)('plans on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  let other: TestSeller;
  let argentine: TestSeller;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    seller = await addSeller(server);
    other = await addSeller(server);
    argentine = await addSeller(server, { country: 'AR', currency: 'ARS' });
  });
  afterAll(() => server?.close());

  const storedPlan = async (planId: string) =>
    (await server.store.query<Record<string, unknown>>('SELECT seller_id, status, amount, floating_data FROM plans WHERE plan_id = $1', [planId])).rows[0];

  describe('createSandboxPlan', () => {
    it('creates an active plan by default and answers it (201)', async () => {
      const res = await server.http
        .post('/sandbox/v1/plans')
        .set('Authorization', ADMIN)
        .send(planBody(seller, { floating_data: [{ installment: 2, amount: 0 }, { installment: 1, amount: 4990 }] }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        seller_id: seller.sellerId,
        plan_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Clube do Café Mensal',
        description: 'Um pacote de café por mês',
        amount: 8990,
        currency: 'BRL',
        payment_types: 'credit_card',
        sales_tax: 1079,
        product_type: 'physical_goods',
        create_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        status: 'active',
        period: { type: 'monthly', billing_cycle: 12 },
        floating_data: [
          { installment: 1, amount: 4990 },
          { installment: 2, amount: 0 },
        ],
      });
      expect(await storedPlan(res.body.plan_id)).toEqual({
        seller_id: seller.sellerId,
        status: 'active',
        amount: 8990,
        floating_data: [
          { installment: 1, amount: 4990 },
          { installment: 2, amount: 0 },
        ],
      });
    });

    it('keeps specific_cycle_in_days for specific periods only', async () => {
      const specific = await createPlan(server, seller, { period: { type: 'specific', billing_cycle: 6, specific_cycle_in_days: 15 } });
      expect(specific.period).toEqual({ type: 'specific', billing_cycle: 6, specific_cycle_in_days: 15 });
      const monthly = await createPlan(server, seller, { period: { type: 'monthly', billing_cycle: 2, specific_cycle_in_days: 15 } });
      expect(monthly.period).toEqual({ type: 'monthly', billing_cycle: 2 });
    });

    it('answers 401 without the sandbox administration token', async () => {
      const res = await server.http.post('/sandbox/v1/plans').send(planBody(seller));
      expectError(res, 401, { error_code: 'unauthorized', message: 'Missing or wrong sandbox administration token', status_code: 401 });
    });

    it('answers 400 for a body that breaks the contract', async () => {
      const res = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send(planBody(seller, { period: { type: 'specific', billing_cycle: 3 } }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      expect(res.body.details.some((d: { path: string }) => d.path === 'body.period.specific_cycle_in_days')).toBe(true);
    });

    it('answers 404 for an unknown seller and stores nothing', async () => {
      const sellerId = randomUUID();
      const res = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send({ ...planBody(seller), seller_id: sellerId });
      expectError(res, 404, { error_code: 'seller_not_found', message: 'Seller not found', status_code: 404 });
      expect((await server.store.query('SELECT 1 FROM plans WHERE seller_id = $1', [sellerId])).rowCount).toBe(0);
    });

    it('answers 422 for an active debit plan of a BR seller, and accepts it inactive, or for AR', async () => {
      const res = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send(planBody(other, { payment_types: 'debit_card' }));
      expectError(res, 422, {
        error_code: 'validation_error',
        message: 'A debit_card plan of a Brazilian seller cannot be active',
        status_code: 422,
        details: [{ message: 'A debit_card plan of a Brazilian seller cannot be active', path: 'body.payment_types' }],
      });
      expect((await server.store.query('SELECT 1 FROM plans WHERE seller_id = $1', [other.sellerId])).rowCount).toBe(0);
      expect((await createPlan(server, other, { payment_types: 'debit_card', status: 'inactive' })).status).toBe('inactive');
      expect((await createPlan(server, argentine, { payment_types: 'debit_card', currency: 'ARS' })).status).toBe('active');
    });

    it('answers 422 for a floating installment outside the billing cycle', async () => {
      const res = await server.http
        .post('/sandbox/v1/plans')
        .set('Authorization', ADMIN)
        .send(planBody(seller, { period: { type: 'monthly', billing_cycle: 2 }, floating_data: [{ installment: 3, amount: 1 }] }));
      expectError(res, 422, {
        error_code: 'validation_error',
        message: 'floating_data installment 3 is outside the billing cycle of 2',
        status_code: 422,
        details: [{ message: 'floating_data installment 3 is outside the billing cycle of 2', path: 'body.floating_data.0.installment' }],
      });
    });
  });

  describe('updatePlanStatus', () => {
    it('deactivates and reactivates a plan, answering it (200) and recording who did it', async () => {
      const plan = await createPlan(server, seller);
      const off = await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(seller.auth).set('username', 'maria@example.com');
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ ...plan, status: 'inactive' });
      expect((await storedPlan(plan.plan_id))!.status).toBe('inactive');
      const on = await server.http.patch(`${PLANS}/${plan.plan_id}/status/active`).set(seller.auth);
      expect(on.status).toBe(200);
      expect(on.body).toEqual(plan);
      expect(await auditOf(server, plan.plan_id)).toEqual([
        { actor: 'maria@example.com', client_id: seller.clientId, action: 'plan.status.inactive' },
        { actor: seller.clientId, client_id: seller.clientId, action: 'plan.status.active' },
      ]);
    });

    it('accepts the status the plan already has: 200, nothing changes, nothing audited', async () => {
      const plan = await createPlan(server, seller);
      const res = await server.http.patch(`${PLANS}/${plan.plan_id}/status/active`).set(seller.auth).set('Content-Type', 'application/json');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(plan);
      expect(await auditOf(server, plan.plan_id)).toEqual([]);
    });

    it('answers 404 for an unknown plan', async () => {
      const planId = randomUUID();
      const res = await server.http.patch(`${PLANS}/${planId}/status/inactive`).set(seller.auth);
      expectError(res, 404, { message: 'Plan not found', name: 'be-plan', status_code: 404, combined_id: planId, seller_id: seller.sellerId });
    });

    it("answers 404 for another seller's plan and leaves it unchanged", async () => {
      const plan = await createPlan(server, seller);
      const res = await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(other.auth);
      expectError(res, 404, { message: 'Plan not found', name: 'be-plan', status_code: 404, combined_id: plan.plan_id, seller_id: other.sellerId });
      expect((await storedPlan(plan.plan_id))!.status).toBe('active');
    });

    it('answers 422 when activating a debit plan of a BR seller; deactivating it is fine', async () => {
      const plan = await createPlan(server, seller, { payment_types: 'debit_card', status: 'inactive' });
      const res = await server.http.patch(`${PLANS}/${plan.plan_id}/status/active`).set(seller.auth);
      expectError(res, 422, { message: 'Debit plans cannot be activated in Brazil', name: 'be-plan', status_code: 422, combined_id: plan.plan_id, seller_id: seller.sellerId });
      expect((await storedPlan(plan.plan_id))!.status).toBe('inactive');
      expect((await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(seller.auth)).status).toBe(200);
    });

    it('answers 400 for an unknown status or a plan id that is not a UUID', async () => {
      const plan = await createPlan(server, seller);
      const res = await server.http.patch(`${PLANS}/${plan.plan_id}/status/ACTIVE`).set(seller.auth);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: 'Invalid request', name: 'be-plan', status_code: 400, details: [{ error_code: 'unknown_value' }] });
      expect((await server.http.patch(`${PLANS}/not-a-uuid/status/active`).set(seller.auth)).status).toBe(400);
    });

    it('answers 401 without a token, and with the demo seller token a plan of another seller is 404', async () => {
      const plan = await createPlan(server, seller);
      expectError(await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`), 401, { message: 'Unauthorized', name: 'be-plan', status_code: 401 });
      expect(DEMO_SELLER_ID).not.toBe(seller.sellerId);
    });

    it('answers 400 for a username over 255 characters', async () => {
      const plan = await createPlan(server, seller);
      const res = await server.http.patch(`${PLANS}/${plan.plan_id}/status/inactive`).set(seller.auth).set('username', 'x'.repeat(256));
      expect(res.status).toBe(400);
      expect((await storedPlan(plan.plan_id))!.status).toBe('active');
    });
  });
});
