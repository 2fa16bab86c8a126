// Buyer input at the contract's edges on the hosted pages: what a page accepts is what the contract
// can carry (the order read back through the API, the notification through the client's check), and
// anything a page route cannot take is an HTML page with the pages' headers, never the API's JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCheckoutNotification } from '../../client/webhooks/verify.ts';
import { buildCheckoutNotification } from '../../client/webhooks/testing.ts';
import { notificationRepository } from '../../server/notifications/repository.ts';
import { startPlatformServer, type TestServer } from './support/server.ts';
import { createLink, createSeller, setLinkColumns, type SandboxSeller } from './support/payment-link.ts';
import { buyerForm, cardForm, configureCheckout, createIntent } from './support/checkout.ts';

const MERCHANT = { url: 'http://127.0.0.1:9' }; // never called: no delivery worker runs here

let server: TestServer;
let seller: SandboxSeller;

beforeAll(async () => {
  server = await startPlatformServer('pglite');
  seller = await createSeller(server);
  await configureCheckout(server, seller.token, MERCHANT);
});
afterAll(() => server?.close());

const buy = (shortId: string, form: Record<string, string>) => server.http.post(`/pay/${shortId}`).type('form').send(form).redirects(1); // to the result page
const ordersOf = async (linkId: string) => (await server.store.query<{ order_id: string }>('SELECT order_id FROM payment_link_orders WHERE link_id = $1', [linkId])).rows;
const notifications = async () => (await notificationRepository(server.store).listForSeller(seller.sellerId)).map((d: { payload: unknown }) => d.payload as any);
const orderIdOf = (html: string) => /order ([0-9a-f-]{36})/.exec(html)?.[1];

/** Pays a new payment intent on its hosted page (303 to the merchant) and answers the notification it enqueued. */
async function paidIntentNotification(change: (body: any) => void = () => {}, form = cardForm()) {
  const intent = await createIntent(server, seller.token, change);
  const paid = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(form);
  expect(paid.status).toBe(303);
  return (await notifications()).find((n) => n.payment_intent_id === intent.payment_intent_id);
}

/** An HTML page with the headers every hosted page carries, and no trace of the server's code. */
function expectPage(res: { status: number; headers: Record<string, string>; text: string }, status: number, text: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.text).toContain(text);
  expect(res.text).not.toMatch(/\bat .+:\d+:\d+|node:internal|\.ts:\d+/);
}

describe('the buyer of a payment link page', () => {
  it('refuses an e-mail address the contract does not read as one (422 page, no order), and takes one it does', async () => {
    const link = await createLink(server, seller.sellerId);
    for (const email of ['a@b..de', 'a(b@c.de', 'ä@b.de', 'a@b_c.de', 'ana@', 'ana costa@example.com']) {
      expectPage(await buy(link.short_id, { ...buyerForm({ email }), ...cardForm() }), 422, 'The e-mail address is not valid.');
    }
    expect(await ordersOf(link.link_id)).toEqual([]);
    const bought = await buy(link.short_id, { ...buyerForm({ email: 'ana+loja@mail.example.com' }), ...cardForm() });
    expectPage(bought, 200, 'Payment authorized');
    const orderId = orderIdOf(bought.text)!;
    const read = await server.http.get(`/dpy/payment-link/v1/payment-links/${link.link_id}/orders/${orderId}`).set('Authorization', `Bearer ${seller.token}`);
    expect(read.status).toBe(200);
    expect(read.body.customer.email).toBe('ana+loja@mail.example.com');
  });

  it('refuses a first and last name longer than the contract\'s 120-character name together, and takes 120', async () => {
    const link = await createLink(server, seller.sellerId);
    const tooLong = await buy(link.short_id, { ...buyerForm({ first_name: 'A'.repeat(60), last_name: 'B'.repeat(60) }), ...cardForm() });
    expectPage(tooLong, 422, 'First and last name together have at most 119 characters.');
    expect(await ordersOf(link.link_id)).toEqual([]);
    const longest = await buy(link.short_id, { ...buyerForm({ first_name: 'A'.repeat(59), last_name: 'B'.repeat(60) }), ...cardForm() });
    expectPage(longest, 200, 'Payment authorized');
    const payload = (await notifications()).find((n) => n.order_id === orderIdOf(longest.text));
    expect(validateCheckoutNotification(payload).customer?.name).toBe(`${'A'.repeat(59)} ${'B'.repeat(60)}`);
  });
});

describe('the customer of a payment intent', () => {
  it('is notified with any e-mail address the API accepted: the notification check reads `email` as the validator does', async () => {
    for (const email of ['ana@localhost', '.ana@example.com', 'ana..costa@example.com']) {
      const payload = await paidIntentNotification((body) => (body.customer.email = email));
      expect(validateCheckoutNotification(payload).customer?.email).toBe(email);
    }
  });
});

describe("the client's test notifications", () => {
  it('have the fields of what the sandbox sends for a payment intent and for a payment link', async () => {
    const instant = await paidIntentNotification();
    const link = await createLink(server, seller.sellerId);
    const orderId = orderIdOf((await buy(link.short_id, { ...buyerForm(), ...cardForm() })).text);
    for (const [mode, real] of [
      ['instant', instant],
      ['payment_link', (await notifications()).find((n) => n.order_id === orderId)],
    ] as const) {
      const built = buildCheckoutNotification({ mode });
      // Fields the merchant's own request decides (its shipping and order details) aside.
      const asked = ['shipping', 'pickup_store', 'shipping_method', 'soft_descriptor'];
      expect(Object.keys(built).sort(), mode).toEqual(Object.keys(real).filter((key) => !asked.includes(key)).sort());
      expect(Object.keys(built.frontend!).sort(), mode).toEqual(Object.keys(real.frontend).sort());
      expect(Object.keys(built.seller!).sort(), mode).toEqual(Object.keys(real.seller).sort());
    }
  });
});

describe('what the page reports of itself', () => {
  it('leaves out a time_page beyond int32 instead of failing the payment; keeps the largest int32', async () => {
    for (const [timePage, expected] of [['2147483648', undefined], ['1e400', undefined], ['2147483647', 2147483647]] as const) {
      const payload = await paidIntentNotification(undefined, cardForm(undefined, { time_page: timePage }));
      expect(validateCheckoutNotification(payload).frontend?.time_page).toBe(expected);
    }
  });
});

describe('a page route that cannot take the request', () => {
  it('answers a form too large, or in an encoding or charset it cannot read, with an HTML page, charging nothing', async () => {
    const link = await createLink(server, seller.sellerId);
    const large = await server.http.post(`/pay/${link.short_id}`).type('form').send({ ...buyerForm(), ...cardForm(), padding: 'x'.repeat(40_000) });
    expectPage(large, 413, 'The form is too large to be sent.');
    const charset = await server.http.post(`/pay/${link.short_id}`).set('content-type', 'application/x-www-form-urlencoded; charset=koi8-r').send('first_name=Ana');
    expectPage(charset, 415, 'The form could not be read');
    // Declared brotli that does not decode.
    const encoded = await server.http.post(`/pay/${link.short_id}`).set('content-type', 'application/x-www-form-urlencoded').set('content-encoding', 'br').send('first_name=Ana');
    expectPage(encoded, 400, 'The form could not be read');
    const undecodable = await server.http.get('/checkout/%E0%A4%A');
    expect([undecodable.status, undecodable.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
    expect(await ordersOf(link.link_id)).toEqual([]);
  });

  it('answers an error of its own with a 500 page that says nothing of the cause, and logs it', async () => {
    const link = await createLink(server, seller.sellerId);
    await setLinkColumns(server.store, link.link_id, { products: JSON.stringify({ broken: true }) });
    const res = await server.http.get(`/pay/${link.short_id}`);
    expectPage(res, 500, 'This page failed on our side.');
    expect(res.text).not.toContain('map');
    expect(server.logs.lines.some((l) => l.level === 50 && l.msg === 'Unexpected error' && /map/.test(l.err?.message ?? ''))).toBe(true);
  });
});
