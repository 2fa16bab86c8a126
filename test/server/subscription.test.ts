// Subscription API over HTTP on the joined bundle: createSubscription, getSubscription and
// updateFloatingInstallment, every status each answers, stored state, and seller isolation.
import { startPlatformServer } from './support/server.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './support/server.ts';
import { addSeller, auditOf, createPlan, dateFromToday, expectError, expectNoCardDataInLogs, STORES, subscribe, subscriptionBody, SUBSCRIPTIONS, today, type TestSeller } from './support/recurrence.ts';

const midnight = (date: string) => `${date}T00:00:00Z`;

describe.each(STORES)('subscriptions on %s', (kind) => {
  let server: TestServer;
  let seller: TestSeller;
  let other: TestSeller;
  let argentine: TestSeller;
  let withoutRecurrence: TestSeller;
  let plan: Record<string, any>;
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    [seller, other, argentine, withoutRecurrence] = [
      await addSeller(server),
      await addSeller(server),
      await addSeller(server, { country: 'AR', currency: 'ARS' }),
      await addSeller(server, { recurrence: false }),
    ];
    plan = await createPlan(server, seller, { floating_data: [{ installment: 1, amount: 4990 }] });
  });
  afterAll(() => server?.close());

  const installments = async (subscriptionId: string) =>
    (
      await server.store.query<Record<string, unknown>>(
        `SELECT installment, scheduled_date::text AS date, amount, status, attempts, next_attempt_on::text AS next
           FROM subscription_installments WHERE subscription_id = $1 ORDER BY installment`,
        [subscriptionId],
      )
    ).rows;
  const countSubscriptions = async (sellerId: string) => (await server.store.query('SELECT 1 FROM subscriptions WHERE seller_id = $1', [sellerId])).rowCount;

  describe('createSubscription', () => {
    it('charges installment 1 within the request when no start date is given: 201 success', async () => {
      const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).set('username', 'maria@example.com').send(subscriptionBody(seller, plan));
      expect(res.status).toBe(201);
      const day = today();
      const schedule = (await installments(res.body.subscription.subscription_id)) as Array<{ date: string }>;
      expect(res.body).toEqual({
        seller_id: seller.sellerId,
        order_id: 'PED-2026-000123',
        create_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        end_date: midnight(schedule[11]!.date),
        payment_date: Number(day.slice(8)),
        next_scheduled_date: midnight(schedule[1]!.date),
        subscription: {
          subscription_id: expect.any(String),
          payment_type: {
            credit: {
              number_installments: 1,
              transaction_type: 'FULL',
              soft_descriptor: 'CAFEMONTANHA',
              card: { brand: 'Visa', bin: '411111', expiration_month: '08', expiration_year: '29', cardholder_name: 'MARIA SOUZA', card_id: expect.any(String) },
            },
          },
          shippings: [{ first_name: 'Maria', last_name: 'Souza', shipping_amount: 1500, address: { city: 'São Paulo', country: 'BR' } }],
        },
        customer: { customer_id: '52998224725' },
        plan,
        device: { ip_address: '200.158.34.12', device_id: 'dev-1' },
        status: 'success',
        status_details: 'Installment 1 of 12 paid',
        payment: {
          seller_id: seller.sellerId,
          order_id: 'PED-2026-000123-1',
          payment_id: expect.any(String),
          amount: 4990 + 1500,
          currency: 'BRL',
          status: 'approved',
          payment_received_timestamp: expect.any(String),
          credit: {
            delayed: false,
            authorization_code: expect.stringMatching(/^\d{6}$/),
            reason_code: '00',
            reason_message: 'Transaction approved',
            acquirer_transaction_id: expect.any(String),
            transaction_id: expect.any(String),
            authorization_timestamp: expect.any(String),
            acquirer: 'SANDBOX',
            soft_descriptor: 'CAFEMONTANHA',
            terminal_nsu: expect.any(String),
            brand: 'Visa',
          },
        },
      });
      expect(schedule[0]).toEqual({ installment: 1, date: day, amount: 4990, status: 'paid', attempts: 1, next: null });
      expect(schedule[1]).toMatchObject({ installment: 2, amount: 8990, status: 'scheduled', attempts: 0 });
      expect(schedule).toHaveLength(12);
      expect(await auditOf(server, res.body.subscription.subscription_id)).toEqual([{ actor: 'maria@example.com', client_id: seller.clientId, action: 'subscription.create' }]);
      // The card token and the security code are not kept in the answer or the logs.
      expect(JSON.stringify(res.body)).not.toMatch(/tok_sandbox_approved|"123"|security_code|number_token/);
      expectNoCardDataInLogs(server, ['tok_sandbox_approved', '"security_code":"123"']);
      const stored = await server.store.query<{ payment_type: unknown }>('SELECT payment_type FROM subscriptions WHERE subscription_id = $1', [res.body.subscription.subscription_id]);
      expect(JSON.stringify(stored.rows[0])).not.toContain('security_code');
    });

    it('keeps status created with a future start date and charges nothing (201)', async () => {
      const start = dateFromToday(10);
      const body = subscriptionBody(seller, plan, { installment_start_date: start, order_id: undefined });
      const created = await subscribe(server, seller, body);
      expect(created).toMatchObject({
        installment_start_date: start,
        payment_date: Number(start.slice(8)),
        next_scheduled_date: midnight(start),
        status: 'created',
        status_details: `Scheduled; installment 1 of 12 on ${start}`,
        order_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(created.payment).toBeUndefined();
      const id = created.subscription.subscription_id;
      expect((await server.store.query('SELECT 1 FROM subscription_payments WHERE subscription_id = $1', [id])).rowCount).toBe(0);
      expect((await installments(id))[0]).toEqual({ installment: 1, date: start, amount: 4990, status: 'scheduled', attempts: 0, next: start });
    });

    it('a start date of today charges now', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan, { installment_start_date: today() }));
      expect(created).toMatchObject({ status: 'success', installment_start_date: today(), payment: { status: 'approved' } });
    });

    it('a denied card leaves the subscription delayed with a retry the next day and the payment error', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan, {}, { number_token: 'tok_sandbox_insufficient_funds' }));
      const retry = dateFromToday(1);
      expect(created).toMatchObject({
        status: 'delayed',
        status_details: `Installment 1 of 12 denied; retry 1 of 3 on ${retry}`,
        next_scheduled_date: midnight(retry),
        payment: {
          status: 'denied',
          credit: { delayed: false, authorization_code: '', reason_code: '51', reason_message: 'Insufficient funds' },
          error: {
            status_code: 422,
            name: 'be-payment',
            message: 'Payment denied by the issuer',
            details: [{ description: 'Insufficient funds', description_detail: 'The issuer refused the transaction for lack of funds', error_code: '51', status: 'denied' }],
          },
        },
      });
      expect((await installments(created.subscription.subscription_id))[0]).toMatchObject({ status: 'retrying', attempts: 1, next: retry });
    });

    it('3DS failure is a denied payment; a processing error is unprocessed; pending keeps processing', async () => {
      const denied = await subscribe(server, seller, subscriptionBody(seller, plan, {}, { number_token: 'tok_sandbox_authentication_denied' }));
      expect(denied.payment).toMatchObject({ status: 'denied', credit: { reason_code: '1A' } });
      const unprocessed = await subscribe(server, seller, subscriptionBody(seller, plan, {}, { number_token: 'tok_sandbox_processing_error' }));
      expect(unprocessed).toMatchObject({ status: 'delayed', payment: { status: 'unprocessed', error: { status_code: 502, message: 'Payment could not be processed' } } });
      const pending = await subscribe(server, seller, subscriptionBody(seller, plan, {}, { number_token: 'tok_sandbox_pending' }));
      expect(pending.status).toBe('processing');
      expect(pending.next_scheduled_date).toBeUndefined();
      expect(pending.payment).toEqual({
        seller_id: seller.sellerId,
        order_id: 'PED-2026-000123-1',
        payment_id: expect.any(String),
        amount: 6490,
        currency: 'BRL',
        status: 'pending',
      });
    });

    it('a plan of one installment expires when it is paid; a free installment 1 is paid without a charge', async () => {
      const single = await createPlan(server, seller, { period: { type: 'monthly', billing_cycle: 1 } });
      const ended = await subscribe(server, seller, subscriptionBody(seller, single));
      expect(ended).toMatchObject({ status: 'expired', status_details: 'Installment 1 of 1 paid; the subscription ended' });
      expect(ended.next_scheduled_date).toBeUndefined();
      const free = await createPlan(server, seller, { period: { type: 'monthly', billing_cycle: 3 }, floating_data: [{ installment: 1, amount: 0 }] });
      const trial = await subscribe(server, seller, subscriptionBody(seller, free));
      expect(trial).toMatchObject({ status: 'success', status_details: 'Installment 1 of 3 paid' });
      expect(trial.payment).toBeUndefined();
    });

    it('derives the brand from the bin when omitted', async () => {
      const body = subscriptionBody(seller, plan, {}, { brand: undefined, bin: '549167' });
      const created = await subscribe(server, seller, body);
      expect(created.subscription.payment_type.credit.card.brand).toBe('Mastercard');
      expect(created.payment.credit.brand).toBe('Mastercard');
    });

    it('answers 400 for a missing card field outside AR, and accepts it for AR', async () => {
      const body = subscriptionBody(seller, plan, {}, { expiration_month: undefined, security_code: undefined });
      const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(body);
      expectError(res, 400, {
        message: 'Invalid request',
        name: 'be-subscription',
        status_code: 400,
        seller_id: seller.sellerId,
        details: [
          {
            error_code: 'required_field',
            description: 'subscription.payment_type.credit.card.expiration_month is required',
            description_detail: '/subscription/payment_type/credit/card/expiration_month',
          },
          {
            error_code: 'required_field',
            description: 'subscription.payment_type.credit.card.security_code is required',
            description_detail: '/subscription/payment_type/credit/card/security_code',
          },
        ],
      });
      const arPlan = await createPlan(server, argentine, { currency: 'ARS' });
      const arBody = subscriptionBody(argentine, arPlan, {}, { expiration_month: undefined, expiration_year: undefined, security_code: undefined });
      const created = await subscribe(server, argentine, arBody);
      expect(created.subscription.payment_type.credit.card).toEqual({ brand: 'Visa', bin: '411111', cardholder_name: 'MARIA SOUZA', card_id: expect.any(String) });
      expect(created.payment.currency).toBe('ARS');
    });

    it('answers 400 for a body that breaks the contract (both payment types)', async () => {
      const body = subscriptionBody(seller, plan);
      (body.subscription.payment_type as Record<string, unknown>).debit = body.subscription.payment_type.credit;
      const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: 'Invalid request', name: 'be-subscription', status_code: 400 });
    });

    it("keeps an address's own keys as sent, and refuses a number no double holds (it would come back null)", async () => {
      const withExtra = (value: string) => {
        const body = subscriptionBody(seller, plan) as { subscription: { shippings: Array<{ address: Record<string, unknown> }> } };
        body.subscription.shippings[0]!.address = { city: 'São Paulo', country: 'BR', floor: '__VALUE__' };
        return JSON.stringify(body).replace('"__VALUE__"', value);
      };
      const post = (text: string) => server.http.post(SUBSCRIPTIONS).set(seller.auth).set('content-type', 'application/json').send(text);
      for (const value of ['1e400', '-1e400', `1${'0'.repeat(310)}`, '{"a":[1,2e999]}']) {
        const res = await post(withExtra(value));
        expect(res.status, value).toBe(400);
        expect(res.body, value).toMatchObject({ name: 'be-subscription', status_code: 400 });
        expect(JSON.stringify(res.body)).toContain('The request body has a number beyond the range of a 64-bit float');
      }
      const kept = await post(withExtra('{"level":1e308,"tiny":-1.5e-300,"n":[7,"x",null]}'));
      expect(kept.status).toBe(201);
      expect(kept.body.subscription.shippings[0].address).toEqual({ city: 'São Paulo', country: 'BR', floor: { level: 1e308, tiny: -1.5e-300, n: [7, 'x', null] } });
    });

    it('answers 401 without a token', async () => {
      expectError(await server.http.post(SUBSCRIPTIONS).send(subscriptionBody(seller, plan)), 401, { message: 'Unauthorized', name: 'be-subscription', status_code: 401 });
    });

    it('answers 403 when the Recurrence product is off, before any other rule, and stores nothing', async () => {
      const res = await server.http.post(SUBSCRIPTIONS).set(withoutRecurrence.auth).send(subscriptionBody(seller, plan, { installment_start_date: dateFromToday(-1) }));
      expectError(res, 403, { message: 'Product Recurrence is not enabled for the seller', name: 'be-subscription', status_code: 403, seller_id: withoutRecurrence.sellerId });
      expect(await countSubscriptions(withoutRecurrence.sellerId)).toBe(0);
    });

    it('answers 422 when seller_id is not the token seller', async () => {
      const res = await server.http.post(SUBSCRIPTIONS).set(other.auth).send(subscriptionBody(seller, plan));
      expectError(res, 422, { message: 'seller_id does not match the authenticated seller', name: 'be-subscription', status_code: 422, seller_id: other.sellerId });
    });

    it("answers 404 for an unknown plan or another seller's plan", async () => {
      const unknown = randomUUID();
      const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send({ ...subscriptionBody(seller, plan), plan_id: unknown });
      expectError(res, 404, { message: 'Plan not found', name: 'be-subscription', status_code: 404, combined_id: unknown, seller_id: seller.sellerId });
      const foreign = await server.http.post(SUBSCRIPTIONS).set(other.auth).send(subscriptionBody(other, plan));
      expectError(foreign, 404, { message: 'Plan not found', name: 'be-subscription', status_code: 404, combined_id: plan.plan_id, seller_id: other.sellerId });
      expect(await countSubscriptions(other.sellerId)).toBe(0);
    });

    it('answers 422 for each business rule, storing nothing', async () => {
      const before = await countSubscriptions(seller.sellerId);
      const refused = (message: string, planId: string) => ({
        message,
        name: 'be-subscription',
        status_code: 422,
        combined_id: planId,
        order_id: 'PED-2026-000123',
        seller_id: seller.sellerId,
      });
      const inactive = await createPlan(server, seller, { status: 'inactive' });
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, inactive)), 422, refused('Plan is inactive', inactive.plan_id));

      // Debit from a Brazilian seller is the seed's country rule, whatever the plan: said first.
      const debitBody = subscriptionBody(seller, plan);
      debitBody.subscription.payment_type = { debit: { transaction_type: 'FULL', card: debitBody.subscription.payment_type.credit.card } } as never;
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(debitBody), 422, refused('Debit is not allowed in Brazil', plan.plan_id));
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send({ ...debitBody, plan_id: inactive.plan_id }), 422, refused('Debit is not allowed in Brazil', inactive.plan_id));

      const debitPlan = await createPlan(server, seller, { payment_types: 'debit_card', status: 'inactive' });
      await server.store.query(`UPDATE plans SET status = 'active' WHERE plan_id = $1`, [debitPlan.plan_id]); // only reachable by a back office
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send({ ...debitBody, plan_id: debitPlan.plan_id }), 422, refused('Debit is not allowed in Brazil', debitPlan.plan_id));
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(subscriptionBody(seller, debitPlan)), 422, refused('Payment type not accepted by the plan', debitPlan.plan_id));

      const past = subscriptionBody(seller, plan, { installment_start_date: dateFromToday(-1) });
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(past), 422, refused('installment_start_date must not be in the past', plan.plan_id));

      const unknownBin = subscriptionBody(seller, plan, {}, { brand: undefined, bin: '999999' });
      expectError(await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(unknownBin), 422, refused('Card brand could not be determined from the bin', plan.plan_id));
      expect(await countSubscriptions(seller.sellerId)).toBe(before);
    });

    it('accepts debit for an AR seller on a debit plan', async () => {
      const debitPlan = await createPlan(server, argentine, { payment_types: 'debit_card', currency: 'ARS' });
      const body = subscriptionBody(argentine, debitPlan);
      body.subscription.payment_type = { debit: { transaction_type: 'FULL', card: body.subscription.payment_type.credit.card } } as never;
      const created = await subscribe(server, argentine, body);
      expect(created.subscription.payment_type.debit).toMatchObject({ transaction_type: 'FULL', card: { brand: 'Visa' } });
      expect(created.subscription.payment_type.debit.number_installments).toBeUndefined();
      expect(created.payment.debit).toMatchObject({ reason_code: '00' });
    });
  });

  describe('getSubscription', () => {
    it('answers the subscription as created, without floating_data unless expanded', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const res = await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(seller.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
      const expanded = await server.http.get(`${SUBSCRIPTIONS}/${id}?expand=floating_data`).set(seller.auth);
      expect(expanded.body).toEqual({ ...created, floating_data: [] });
    });

    it("answers 404 Signature not found for an unknown id and for another seller's subscription", async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      expectError(await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(other.auth), 404, {
        message: 'Signature not found',
        name: 'be-subscription',
        status_code: 404,
        combined_id: id,
        seller_id: other.sellerId,
      });
      const unknown = randomUUID();
      expectError(await server.http.get(`${SUBSCRIPTIONS}/${unknown}`).set(seller.auth), 404, {
        message: 'Signature not found',
        name: 'be-subscription',
        status_code: 404,
        combined_id: unknown,
        seller_id: seller.sellerId,
      });
    });

    it('answers 400 for an unknown expand value or a non-UUID id, 401 without a token', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const res = await server.http.get(`${SUBSCRIPTIONS}/${created.subscription.subscription_id}?expand=payments`).set(seller.auth);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: 'Invalid request', name: 'be-subscription', status_code: 400, details: [{ error_code: 'unknown_value' }] });
      expect((await server.http.get(`${SUBSCRIPTIONS}/abc`).set(seller.auth)).status).toBe(400);
      expectError(await server.http.get(`${SUBSCRIPTIONS}/${created.subscription.subscription_id}`), 401, { message: 'Unauthorized', name: 'be-subscription', status_code: 401 });
    });
  });

  describe('updateFloatingInstallment', () => {
    const floating = (id: string, installment: number) => `${SUBSCRIPTIONS}/${id}/floating/installment/${installment}`;

    it('changes the amount and date of a future installment, moves end_date, and repeats identically', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const rows = (await installments(id)) as Array<{ date: string }>;
      const newDate = new Date(Date.parse(rows[11]!.date) + 2 * 86_400_000).toISOString().slice(0, 10);
      const res = await server.http.put(floating(id, 12)).set(seller.auth).set('username', 'ops').send({ new_amount: 6990, new_scheduled_date: newDate });
      const expected = {
        subscription_id: id,
        floating_data: [{ installment: 12, new_amount: 6990, new_scheduled_date: newDate, original_scheduled_date: rows[11]!.date, original_amount: 8990 }],
      };
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
      const again = await server.http.put(floating(id, 12)).set(seller.auth).send({ new_amount: 6990, new_scheduled_date: newDate });
      expect(again.body).toEqual(expected);
      const read = await server.http.get(`${SUBSCRIPTIONS}/${id}?expand=floating_data`).set(seller.auth);
      expect(read.body.floating_data).toEqual(expected.floating_data);
      expect(read.body.end_date).toBe(midnight(newDate));
      expect((await installments(id))[11]).toEqual({ installment: 12, date: newDate, amount: 6990, status: 'scheduled', attempts: 0, next: newDate });
      expect((await auditOf(server, `${id}/12`))[0]).toEqual({ actor: 'ops', client_id: seller.clientId, action: 'subscription.floating_installment' });
    });

    it.each(['0x2', '2e0', '%2B2', '2.0'])('answers 400 to an installment number not in decimal digits (%s), changing nothing', async (spelling) => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const before = await installments(id);
      const res = await server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/${spelling}`).set(seller.auth).send({ new_amount: 1 });
      expectError(res, 400, {
        message: 'Invalid request',
        name: 'be-subscription',
        status_code: 400,
        details: [{ error_code: 'invalid_field', description: 'installment must be an integer written in decimal digits', description_detail: 'path.installment' }],
      });
      expect(await installments(id)).toEqual(before);
    });

    it('moves next_scheduled_date when the next installment moves; an amount alone keeps the date', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const rows = (await installments(id)) as Array<{ date: string }>;
      const moved = new Date(Date.parse(rows[1]!.date) - 86_400_000).toISOString().slice(0, 10);
      await server.http.put(floating(id, 2)).set(seller.auth).send({ new_scheduled_date: moved }).expect(200);
      const read = await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(seller.auth);
      expect(read.body.next_scheduled_date).toBe(midnight(moved));
      const amount = await server.http.put(floating(id, 3)).set(seller.auth).send({ new_amount: 0 });
      expect(amount.body.floating_data[1]).toEqual({ installment: 3, new_amount: 0, new_scheduled_date: rows[2]!.date, original_scheduled_date: rows[2]!.date, original_amount: 8990 });
    });

    it('answers 403 in the floating-data shape when the Recurrence product is off', async () => {
      const id = randomUUID();
      const res = await server.http.put(floating(id, 2)).set(withoutRecurrence.auth).send({ new_amount: 1 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ subscription_id: id, floating_data: [] });
    });

    it("answers 404 for an unknown subscription and for another seller's, changing nothing", async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const res = await server.http.put(floating(id, 2)).set(other.auth).send({ new_amount: 1 });
      expectError(res, 404, { message: 'Signature not found', name: 'be-subscription', status_code: 404, combined_id: id, seller_id: other.sellerId });
      expect((await installments(id))[1]).toMatchObject({ amount: 8990 });
    });

    it('answers 422 for each rule, with the charged payment in payments[]', async () => {
      const created = await subscribe(server, seller, subscriptionBody(seller, plan));
      const id = created.subscription.subscription_id;
      const refused = (message: string, extra: Record<string, unknown> = {}) => ({
        message,
        name: 'be-subscription',
        status_code: 422,
        combined_id: id,
        order_id: 'PED-2026-000123',
        seller_id: seller.sellerId,
        ...extra,
      });
      expectError(await server.http.put(floating(id, 13)).set(seller.auth).send({ new_amount: 1 }), 422, refused("Installment is outside the plan's billing cycle"));
      const payment = created.payment;
      expectError(
        await server.http.put(floating(id, 1)).set(seller.auth).send({ new_amount: 1 }),
        422,
        refused('Installment has already been charged', {
          payments: [
            {
              status: 'approved',
              brand: 'Visa',
              payment_id: payment.payment_id,
              seller_id: seller.sellerId,
              amount: '6490',
              currency: 'BRL',
              order_id: 'PED-2026-000123-1',
              payment_tag: '1',
              acquirer_transaction_id: payment.credit.acquirer_transaction_id,
              authorization_code: payment.credit.authorization_code,
              transaction_id: payment.credit.transaction_id,
              reason_code: '00',
              reason_message: 'Transaction approved',
            },
          ],
        }),
      );
      const rows = (await installments(id)) as Array<{ date: string }>;
      const message = 'new_scheduled_date must be after today and keep the installments in order';
      expectError(await server.http.put(floating(id, 2)).set(seller.auth).send({ new_scheduled_date: rows[2]!.date }), 422, refused(message));
      expectError(await server.http.put(floating(id, 2)).set(seller.auth).send({ new_scheduled_date: today() }), 422, refused(message));
      await server.store.query(`UPDATE subscriptions SET status = 'canceled' WHERE subscription_id = $1`, [id]);
      expectError(await server.http.put(floating(id, 2)).set(seller.auth).send({ new_amount: 1 }), 422, refused('Subscription is not active'));
      expect((await installments(id))[1]).toMatchObject({ amount: 8990, status: 'scheduled' });
    });

    it('answers 400 for an empty body or installment 0, 401 without a token', async () => {
      const id = randomUUID();
      const empty = await server.http.put(floating(id, 2)).set(seller.auth).send({});
      expect(empty.status).toBe(400);
      expect(empty.body).toMatchObject({ message: 'Invalid request', name: 'be-subscription', status_code: 400 });
      expect((await server.http.put(floating(id, 0)).set(seller.auth).send({ new_amount: 1 })).status).toBe(400);
      expectError(await server.http.put(floating(id, 2)).send({ new_amount: 1 }), 401, { message: 'Unauthorized', name: 'be-subscription', status_code: 401 });
    });
  });
});
