// The seed's money rule on every request that brings an amount: the last two digits are cents, and
// a currency without cents (CLP) gets two zeros appended, so its amounts end in 00; a currency with
// three decimals (KWD) cannot be carried at all. A request breaking it answers 422 in its area's
// error shape, naming each field, and stores nothing; the same amounts ending in 00 are taken, and
// the pages that show them answer (before, 15001 CLP was stored and its hosted page answered 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startPlatformServer, type TestServer } from './support/server.ts';
import { createSeller, product, type SandboxSeller } from './support/payment-link.ts';
import { createIntent, WC } from './support/checkout.ts';
import { contractExample } from './support/web-checkout.ts';
import { checkoutPage, layoutOf } from '../../server/hosted-checkout/pages.ts';
import { createPlan, planBody, SUBSCRIPTIONS, subscribe, subscriptionBody, type TestSeller } from './support/recurrence.ts';

const NO_CENTS = 'CLP has no cents: its amounts end in 00';

let server: TestServer;
let chilean: SandboxSeller;
let brazilian: SandboxSeller;
let recurring: TestSeller;
beforeAll(async () => {
  server = await startPlatformServer('pglite');
  chilean = await createSeller(server, { trade_name: 'Tienda Andes', country: 'CL', currencies: ['CLP'] });
  brazilian = await createSeller(server);
  recurring = { sellerId: chilean.sellerId, clientId: chilean.clientId, country: 'CL', auth: { Authorization: `Bearer ${chilean.token}` } };
});
afterAll(() => server?.close());

const count = async (sql: string, params: unknown[]) => Number((await server.store.query<{ n: string }>(sql, params)).rows[0]!.n);

/** A payment intent of the contract's example in another currency: a Chilean one in CLP by default. */
function intentIn(amounts: { payment: number; product: number; shipping: number; rate?: number }, currency = 'CLP', documentType = 'RUT') {
  const body = contractExample('PaymentIntentRequestStandard');
  body.payment = { currency, amount: amounts.payment };
  body.customer.document_type = documentType;
  body.product[0].value = amounts.product;
  body.shipping.shipping_amount = amounts.shipping;
  if (amounts.rate !== undefined) body.additional_data = { rates: [{ key: 'IVA', value: amounts.rate }] };
  return body;
}

describe('a payment intent', () => {
  it('refuses CLP amounts that do not end in 00, naming each field, in the web checkout shape, and stores nothing', async () => {
    const res = await server.http
      .post(`${WC}/payment-intent`)
      .set('Authorization', `Bearer ${chilean.token}`)
      .send(intentIn({ payment: 15001, product: 22990, shipping: 2990, rate: 1 }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_error', message: expect.any(String) });
    const fields = JSON.stringify(res.body.details);
    for (const field of ['payment.amount', 'product.0.value', 'shipping.shipping_amount', 'additional_data.rates.0.value']) expect(fields).toContain(field);
    expect(fields).toContain(`${NO_CENTS} (150 CLP is sent as 15000; got 15001)`);
    expect(fields).not.toMatch(/at Object|\.ts:\d/);
    expect(await count('SELECT count(*) AS n FROM payment_intents WHERE seller_id = $1', [chilean.sellerId])).toBe(0);
  });

  it('takes CLP amounts ending in 00, and its hosted page shows them in pesos', async () => {
    const intent = await createIntent(server, chilean.token, (body) => Object.assign(body, intentIn({ payment: 2_598_000, product: 2_299_000, shipping: 299_000, rate: 41_500 })));
    const page = await server.http.get(`/checkout/${intent.payment_intent_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Tienda Andes');
    expect(page.text).toMatch(/25\.980/); // 25,980 pesos, Chilean grouping
  });

  it('judges a card verification\'s shipping amount and rates in the seller\'s first currency, the one its notification carries', async () => {
    const verification = (shipping: number, rate: number) =>
      Object.assign(contractExample('PaymentIntentRequestCardVerification'), {
        shipping: { ...contractExample('PaymentIntentRequestStandard').shipping, shipping_amount: shipping },
        additional_data: { rates: [{ key: 'IVA', value: rate }] },
      });
    const refused = await server.http.post(`${WC}/payment-intent`).set('Authorization', `Bearer ${chilean.token}`)
      .send(Object.assign(verification(15001, 1), { customer: { ...contractExample('PaymentIntentRequestCardVerification').customer, document_type: 'RUT' } }));
    expect(refused.status).toBe(422);
    expect(refused.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['additional_data.rates.0.value', 'shipping.shipping_amount']);
    expect(JSON.stringify(refused.body.details)).toContain(`${NO_CENTS} (150 CLP is sent as 15000; got 15001)`);
    // In whole pesos it is taken, and its page answers (15001 was stored and its page answered 500).
    const intent = await createIntent(server, chilean.token, (body) => Object.assign(body, verification(299_000, 41_500), { customer: { ...body.customer, document_type: 'RUT' } }), 'PaymentIntentRequestCardVerification');
    const page = await server.http.get(`/checkout/${intent.payment_intent_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Verify card');
    // A seller with cents keeps them on a verification.
    await createIntent(server, brazilian.token, (body) => Object.assign(body, verification(15001, 1)), 'PaymentIntentRequestCardVerification');
  });

  it('renders a card verification page without formatting its amounts (one stored before the rule would throw)', () => {
    const page = checkoutPage({
      tradeName: 'Tienda Andes', layout: layoutOf({ primaryColor: null, accentColor: null, typeFace: 'Roboto' } as never), country: 'CL', currency: 'CLP',
      lines: [], shippingAmount: 15001, total: 0, verification: true, methods: ['credit'], installments: [], action: '/checkout/x/pay', nonce: 'n',
    });
    expect(page).toContain('Verify card');
    expect(page).not.toContain('Shipping');
  });

  it('leaves cents to a currency that has them: 15001 BRL is R$ 150,01', async () => {
    const intent = await createIntent(server, brazilian.token, (body) => {
      body.payment.amount = 15001;
      body.product[0].value = 12011;
    });
    const page = await server.http.get(`/checkout/${intent.payment_intent_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/150,01/);
  });
});

describe('a currency without cents other than CLP', () => {
  it.each(['PYG', 'JPY'])('%s: the hosted pages round each installment to whole units (they answered 500: only CLP was rounded so)', async (currency) => {
    const seller = await createSeller(server, { trade_name: `Loja ${currency}`, country: 'UY', currencies: [currency] });
    // 1,000,000 units in 7 installments is 142,857.14 each: shown as 142,857 whole units.
    const link = await server.http
      .post('/sandbox/v1/payment-links')
      .set('Authorization', ADMIN)
      .send({ seller_id: seller.sellerId, label: 'Link', type: 'custom', products: [product({ amount: 100_000_000 })] });
    expect(link.status).toBe(201);
    const page = await server.http.get(`/pay/${link.body.short_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/7× [^<(]*142[.,\u00a0\u202f ]?857[^.,\d]/);
    const intent = await createIntent(server, seller.token, (body) => Object.assign(body, intentIn({ payment: 100_000_000, product: 100_000_000, shipping: 0 }, currency, 'CI')));
    const checkout = await server.http.get(`/checkout/${intent.payment_intent_id}`);
    expect(checkout.status).toBe(200);
    expect(checkout.text).toMatch(/7× [^<(]*142[.,\u00a0\u202f ]?857[^.,\d]/);
  });
});

describe('the sandbox', () => {
  it('refuses a seller currency with three decimals (KWD), at its index, and stores no seller', async () => {
    const before = await count('SELECT count(*) AS n FROM sellers', []);
    const res = await server.http
      .post('/sandbox/v1/sellers')
      .set('Authorization', ADMIN)
      .send({ trade_name: 'Kuwait', email: 'k@example.com', country: 'CL', currencies: ['CLP', 'KWD'] });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error_code: 'validation_error', status_code: 422, message: expect.stringContaining('KWD has more than two decimals') });
    expect(JSON.stringify(res.body.details)).toContain('currencies.1');
    expect(res.body.credentials).toBeUndefined();
    expect(await count('SELECT count(*) AS n FROM sellers', [])).toBe(before);
  });

  it('refuses a CLP link whose product or shipping amount does not end in 00, and stores no link', async () => {
    const res = await server.http
      .post('/sandbox/v1/payment-links')
      .set('Authorization', ADMIN)
      .send({ seller_id: chilean.sellerId, label: 'Link', type: 'custom', currency: 'CLP', shipping_amount: 50, products: [product({ amount: 1_000_000 }), product({ amount: 12345 })] });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error_code: 'validation_error', status_code: 422, message: expect.stringContaining(`${NO_CENTS} (150 CLP is sent as 15000; got 12345)`) });
    const fields = JSON.stringify(res.body.details);
    expect(fields).toContain('products.1.amount');
    expect(fields).toContain('shipping_amount');
    expect(fields).not.toContain('products.0.amount');
    expect(await count('SELECT count(*) AS n FROM payment_links WHERE seller_id = $1', [chilean.sellerId])).toBe(0);

    const taken = await server.http
      .post('/sandbox/v1/payment-links')
      .set('Authorization', ADMIN)
      .send({ seller_id: chilean.sellerId, label: 'Link', type: 'custom', currency: 'CLP', shipping_amount: 500_000, products: [product({ amount: 1_234_500 })] });
    expect(taken.status).toBe(201);
    const page = await server.http.get(`/pay/${taken.body.short_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/12\.345/);
  });

  it('refuses a CLP plan whose amount, sales tax or floating amount does not end in 00, and a KWD plan', async () => {
    const res = await server.http
      .post('/sandbox/v1/plans')
      .set('Authorization', ADMIN)
      .send(planBody(recurring, { currency: 'CLP', amount: 999, sales_tax: 5, floating_data: [{ installment: 2, amount: 1001 }] }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error_code: 'validation_error', status_code: 422 });
    const fields = JSON.stringify(res.body.details);
    for (const field of ['body.amount', 'sales_tax', 'floating_data.0.amount']) expect(fields).toContain(field);
    const kwd = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send(planBody(recurring, { currency: 'KWD', amount: 1000, sales_tax: 0 }));
    expect(kwd.status).toBe(422);
    expect(kwd.body.message).toContain('KWD has more than two decimals');
    expect(await count('SELECT count(*) AS n FROM plans WHERE seller_id = $1', [chilean.sellerId])).toBe(0);
  });
});

describe('a subscription on a CLP plan', () => {
  it('refuses a shipping amount or a floating new_amount that does not end in 00, in the recurrence shape, and changes nothing', async () => {
    const plan = await createPlan(server, recurring, { currency: 'CLP', amount: 899_000, sales_tax: 107_900 });
    const body = subscriptionBody(recurring, plan, { order_id: 'PED-CLP-1', installment_start_date: '2036-01-05' });
    body.subscription.shippings[0]!.shipping_amount = 1550;
    const refused = await server.http.post(SUBSCRIPTIONS).set(recurring.auth).send(body);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ status_code: 422, order_id: 'PED-CLP-1', message: expect.stringContaining('must end in 00') });
    expect(refused.body.details).toEqual([
      { error_code: 'invalid_field', description: expect.stringContaining(`${NO_CENTS} (150 CLP is sent as 15000; got 1550)`), description_detail: '/subscription/shippings/0/shipping_amount' },
    ]);
    expect(await count('SELECT count(*) AS n FROM subscriptions WHERE seller_id = $1', [chilean.sellerId])).toBe(0);

    body.subscription.shippings[0]!.shipping_amount = 150_000;
    const created = await subscribe(server, recurring, body);
    const id = created.subscription.subscription_id;
    const floating = (amount: number) => server.http.put(`${SUBSCRIPTIONS}/${id}/floating/installment/2`).set(recurring.auth).send({ new_amount: amount });
    const odd = await floating(12345);
    expect(odd.status).toBe(422);
    expect(odd.body).toMatchObject({ status_code: 422, message: expect.stringContaining('must end in 00') });
    expect(odd.body.details).toEqual([{ error_code: 'invalid_field', description: expect.stringContaining('got 12345'), description_detail: '/new_amount' }]);
    const view = await server.http.get(`${SUBSCRIPTIONS}/${id}`).set(recurring.auth);
    expect(JSON.stringify(view.body)).not.toContain('12345');
    const even = await floating(1_234_500);
    expect(even.status).toBe(200);
    expect(even.body.floating_data).toEqual(expect.arrayContaining([expect.objectContaining({ installment: 2, new_amount: 1_234_500 })]));
  });
});
