// The hosted checkout and payment link pages over HTTP, on every store kind: what each page shows,
// every payment outcome and what it leaves in the store (intent, payments, vault, order, outbox),
// the merchant redirects, and that no card number reaches the database or the logs.
import { startPlatformServer } from './support/server.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../contract/money.ts';
import { validateCheckoutNotification } from '../../client/webhooks/verify.ts';
import { DEMO_SELLER } from '../../server/sandbox/demo-seller.ts';
import { notificationRepository } from '../../server/notifications/repository.ts';
import type { TestServer } from './support/server.ts';
import { unendedRequest } from '../support/unended-request.ts';
import { createLink, createSeller, setLinkColumns, STORES, type SandboxSeller } from './support/payment-link.ts';
import {
  APPROVED, buyerForm, cardForm, configureCheckout, createIntent, databaseDump, deliveryForm, DENIED, startMerchant, THREEDS_DENIED, type Merchant, WC,
} from './support/checkout.ts';

const MERCHANT = { url: 'http://127.0.0.1:9' }; // never called here: these suites run no delivery worker

for (const kind of STORES) {
  describe(`hosted checkout on ${kind}`, () => {
    let server: TestServer;
    let seller: SandboxSeller;
    let plain: SandboxSeller; // no technical configuration: result pages, no notification
    let merchant: Merchant;

    beforeAll(async () => {
      server = await startPlatformServer(kind);
      merchant = await startMerchant();
      seller = await createSeller(server, { trade_name: 'Café <Aurora> & Cia' });
      plain = await createSeller(server, { trade_name: 'Loja Simples' });
      await configureCheckout(server, seller.token, MERCHANT);
      // The demo seller's payments: installment schemas with interest and surcharge groups.
      await server.store.query(`UPDATE sellers SET payments = $1 WHERE seller_id = $2`, [JSON.stringify(DEMO_SELLER.payments), seller.sellerId]);
    });
    afterAll(async () => {
      await merchant?.close();
      await server?.close();
    });

    const page = (id: string) => server.http.get(`/checkout/${id}`);
    const pay = (id: string, form: Record<string, string>) => server.http.post(`/checkout/${id}/pay`).type('form').send(form);
    const intentRow = async (id: string) => (await server.store.query<any>(`SELECT * FROM payment_intents WHERE payment_intent_id = $1`, [id])).rows[0];
    const deliveriesOf = async (s: SandboxSeller) => notificationRepository(server.store).listForSeller(s.sellerId);
    const paymentsOf = async (id: string) => (await server.store.query<any>(`SELECT * FROM checkout_payments WHERE payment_intent_id = $1 ORDER BY created_at`, [id])).rows;

    describe('the checkout page', () => {
      it('shows the trade name (escaped), products and total in BRL, the layout, and only card methods and BR wallets', async () => {
        const intent = await createIntent(server, seller.token);
        expect(intent.redirect_url).toBe(`${server.config.publicBaseUrl}/checkout/${intent.payment_intent_id}`);
        const res = await page(intent.payment_intent_id);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['content-security-policy']).toMatch(/default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-/);
        // The form's answer is a 303 to the merchant: no form-action, which browsers would apply to every
        // redirect after it (the merchant's own http to https, say) and stop a customer already charged.
        expect(res.headers['content-security-policy']).not.toContain('form-action');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.text).toContain('Café &lt;Aurora&gt; &amp; Cia');
        expect(res.text).not.toContain('<Aurora>');
        expect(res.text).toContain(formatMoney(intent.request.payment.amount, 'BRL', 'pt-BR'));
        for (const p of intent.request.product) expect(res.text).toContain(p.title);
        expect(res.text).toContain('--primary:#6A1B9A;--accent:#FFB300');
        expect(res.text).toContain('font-family:Roboto');
        const methods = [...res.text.matchAll(/name="method" value="([a-z_]+)"/g)].map((m) => m[1]);
        expect(methods).toEqual(['credit', 'debit', 'google_pay', 'apple_pay']);
        // Installments of the seller's configuration, interest and surcharge groups as configured.
        expect(res.text).toMatch(/<option value="2">2× R\$\s129,90 \(no interest\)<\/option>/);
        expect(res.text).toMatch(/<option value="7">7× .* \(with interest\)/);
        expect(res.text).toMatch(/<option value="10">10× .* \(with 2.99% surcharge\)/);
        expect(res.text).not.toMatch(/src="http|href="http/); // no external asset
      });

      it('answers an unknown or malformed id with a 404 page, its payment too, and logs no error', async () => {
        // 36 hex digits and dashes that are not a GUID's 8-4-4-4-12 reached the store's uuid column: a 500.
        const malformed = ['-'.repeat(36), 'f'.repeat(36), '0000000-00000-0000-0000-000000000000', '0f6d3c1e4b7a-4c55-9a0e-2f1b7d9c8e41-'];
        for (const id of ['0f6d3c1e-4b7a-4c55-9a0e-2f1b7d9c8e41', 'not-an-id', ...malformed]) {
          for (const res of [await page(id), await pay(id, cardForm())]) {
            expect(res.status, id).toBe(404);
            expect(res.text).toContain('This checkout does not exist.');
          }
        }
        expect(server.logs.lines.filter((line) => line.level >= 50)).toEqual([]);
      });

      it('answers an expired intent with a 410 page, and refuses its payment', async () => {
        const intent = await createIntent(server, seller.token);
        await server.store.query(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE payment_intent_id = $1`, [intent.payment_intent_id]);
        expect((await page(intent.payment_intent_id)).status).toBe(410);
        const res = await pay(intent.payment_intent_id, cardForm());
        expect(res.status).toBe(410);
        expect(res.text).toContain('This checkout has expired.');
        expect(await paymentsOf(intent.payment_intent_id)).toEqual([]);
      });

      it('offers only credit and debit to a card verification, and no installments', async () => {
        const intent = await createIntent(server, seller.token, () => {}, 'PaymentIntentRequestCardVerification');
        const res = await page(intent.payment_intent_id);
        expect([...res.text.matchAll(/name="method" value="([a-z_]+)"/g)].map((m) => m[1])).toEqual(['credit', 'debit']);
        expect(res.text).toContain('Verify card');
        expect(res.text).not.toContain('id="installments"');
      });
    });

    describe('paying an intent', () => {
      it('answers a form that says it is too large (413) or does not say its length (400) before reading it, and closes the connection', async () => {
        const intent = await createIntent(server, seller.token);
        const url = `${server.url}/checkout/${intent.payment_intent_id}/pay`;
        const first = new URLSearchParams(cardForm(APPROVED)).toString();
        const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
        // body-parser read such a form to its end before its 413: 100 GB announced, a few bytes sent.
        const large = await unendedRequest(url, { headers: { ...form, 'Content-Length': '100000000000' }, first });
        expect(large).toMatchObject({ status: 413, connection: 'close', closedBySandbox: true });
        expect(large.body).toContain('The form is too large to be sent.');
        const chunked = await unendedRequest(url, { headers: { ...form, 'Transfer-Encoding': 'chunked' }, first });
        expect(chunked).toMatchObject({ status: 400, connection: 'close', closedBySandbox: true });
        expect(chunked.body).toContain('The form could not be read');
        const compressed = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').set('Content-Encoding', 'gzip').send(first);
        expect(compressed.status).toBe(400);
        expect(compressed.text).toContain('The form could not be read');
        expect(await paymentsOf(intent.payment_intent_id)).toEqual([]);
        expect((await intentRow(intent.payment_intent_id)).status).toBe('created');
      });

      it('approved card: 303 to success_url with the intent id, intent paid, bin and last four only, instant notification enqueued', async () => {
        const intent = await createIntent(server, seller.token);
        const id = intent.payment_intent_id;
        const res = await pay(id, cardForm(APPROVED));
        expect(res.status).toBe(303);
        expect(res.headers.location).toBe(`${MERCHANT.url}/success?payment_intent_id=${id}`);
        const row = await intentRow(id);
        expect(row).toMatchObject({ status: 'paid', card_bin: '411111', card_last_four: '1111', card_id: null });
        const [payment] = await paymentsOf(id);
        expect(payment).toMatchObject({ status: 'Authorized', return_code: '00', method: 'credit', card_bin: '411111', card_last_four: '1111', card_brand: 'Visa' });
        expect(payment.payment_id).toBe(row.payment_id);
        const [delivery] = (await deliveriesOf(seller)).filter((d: any) => d.payload.payment_intent_id === id);
        const payload = validateCheckoutNotification(delivery!.payload);
        expect(payload).toMatchObject({
          checkout_id: row.checkout_id,
          payment_intent_id: id,
          order_id: intent.request.order_id,
          mode: 'instant',
          seller: { id: seller.sellerId, trade_name: 'Café <Aurora> & Cia', settings: { notification_url_configured: true } },
          customer: intent.request.customer,
          payment: { method: 'credit', amount: intent.request.payment.amount, currency: 'BRL', result: { payment_id: row.payment_id, status: 'Authorized', return_code: '00' } },
          frontend: { sales_channel: 'WEB', application_version: '1.0.0', time_page: 12, timezone: 'America/Sao_Paulo', locale: 'pt-BR', card_pasted: false, link: intent.redirect_url },
          product: intent.request.product,
        });
        expect(payload.payment.installment).toBeUndefined();
        expect(payload.reference_code).toMatch(/^[A-Z0-9]{12}$/);
        expect(payload.payment.result.authorization_code).toMatch(/^\d{6}$/);
        expect(delivery!.status).toBe('pending');
        // Paying twice is refused, and the page says it is paid.
        const again = await pay(id, cardForm(APPROVED));
        expect(again.status).toBe(409);
        expect(again.text).toContain('This checkout has already been paid.');
        expect((await page(id)).status).toBe(409);
        expect(await paymentsOf(id)).toHaveLength(1);
      });

      it('refuses a payment form a browser sent from another site (403 page), charging nothing; its own page\'s post goes through', async () => {
        const { payment_intent_id: id } = await createIntent(server, seller.token);
        const forged = [
          { 'sec-fetch-site': 'cross-site', origin: 'null' },
          { 'sec-fetch-site': 'same-site' }, // another port of the same host is another origin
          { origin: 'https://shop.attacker.example' }, // a browser without Sec-Fetch-Site
          { origin: server.config.publicBaseUrl.replace(/:\d+$/, ':1') },
          { origin: 'null' }, // a forging page's own no-referrer, in a browser that sends no Sec-Fetch-Site
        ];
        for (const headers of forged) {
          const res = await server.http.post(`/checkout/${id}/pay`).set(headers).type('form').send(cardForm(APPROVED));
          expect(res.status, JSON.stringify(headers)).toBe(403);
          expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
          expect(res.text).toContain('Not sent from this page');
          expect(res.text).toContain('This payment form was sent from another site, so nothing was charged.');
        }
        expect(await paymentsOf(id)).toEqual([]);
        expect((await deliveriesOf(seller)).filter((d: any) => d.payload.payment_intent_id === id)).toEqual([]);
        expect((await page(id)).status).toBe(200); // still payable
        expect((await page(id)).headers['referrer-policy']).toBe('same-origin'); // so the page's own post names its origin
        // The page's own form: same-origin (Origin null too, as a browser may still send it).
        const own = await server.http.post(`/checkout/${id}/pay`).set({ 'sec-fetch-site': 'same-origin', origin: 'null' }).type('form').send(cardForm(APPROVED));
        expect(own.status).toBe(303);
        expect((await intentRow(id)).status).toBe('paid');
        const named = await createIntent(server, seller.token); // Origin naming the sandbox itself
        const ownOrigin = await server.http.post(`/checkout/${named.payment_intent_id}/pay`).set({ origin: new URL(server.config.publicBaseUrl).origin }).type('form').send(cardForm(APPROVED));
        expect(ownOrigin.status).toBe(303);
      });

      it('denied card: 303 to error_url, Denied notification, the intent stays payable and a retry succeeds', async () => {
        const { payment_intent_id: id } = await createIntent(server, seller.token);
        const res = await pay(id, cardForm(DENIED));
        expect(res.status).toBe(303);
        expect(res.headers.location).toBe(`${MERCHANT.url}/error?payment_intent_id=${id}`);
        expect((await intentRow(id)).status).toBe('denied');
        const denied = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === id)!;
        expect((denied.payload as any).payment.result).toMatchObject({ status: 'Denied', return_code: '51', return_message: 'Insufficient funds' });
        expect((denied.payload as any).payment.result.authorization_code).toBeUndefined();
        expect((await pay(id, cardForm(APPROVED))).headers.location).toContain('/success?');
        const payments = await paymentsOf(id);
        expect(payments.map((p: any) => p.status)).toEqual(['Denied', 'Authorized']);
        expect(new Set(payments.map((p: any) => p.checkout_id)).size).toBe(1); // one checkout, two attempts
      });

      it('3DS card: Denied 1A when 3DS runs; authorized when the intent sets configurations.3ds false', async () => {
        const runs = await createIntent(server, seller.token);
        await pay(runs.payment_intent_id, cardForm(THREEDS_DENIED));
        expect((await paymentsOf(runs.payment_intent_id))[0]).toMatchObject({ status: 'Denied', return_code: '1A' });
        const skipped = await createIntent(server, seller.token, (b) => (b.configurations = { '3ds': false }));
        await pay(skipped.payment_intent_id, cardForm(THREEDS_DENIED));
        expect((await paymentsOf(skipped.payment_intent_id))[0]).toMatchObject({ status: 'Authorized', return_code: '00' });
      });

      it('an invalid Brazilian CPF as customer_id is Denied by fraud prevention without a charge', async () => {
        const intent = await createIntent(server, seller.token, (b) => (b.customer.customer_id = '12345678900'));
        expect((await intentRow(intent.payment_intent_id)).fraud_prevention_denial).toBe(true);
        const res = await pay(intent.payment_intent_id, cardForm(APPROVED));
        expect(res.headers.location).toContain('/error?');
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment.result).toMatchObject({ status: 'Denied', return_code: 'FRAUD_PREVENTION', return_message: 'Denied by fraud prevention' });
      });

      it('credit in installments: the notification carries type, number and schema; a count the brand lacks is refused on the page', async () => {
        const intent = await createIntent(server, seller.token);
        const refused = await pay(intent.payment_intent_id, cardForm(APPROVED, { installments: '13' }));
        expect(refused.status).toBe(422);
        expect(refused.text).toContain('Visa cards cannot be paid in 13 installments here.');
        await pay(intent.payment_intent_id, cardForm(APPROVED, { installments: '10' }));
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment.installment).toEqual({ type: 'with_interest', number: 10, schema: 'BR_STANDARD' });
        expect((await paymentsOf(intent.payment_intent_id))[0].installments).toBe(10);
      });

      it('debit: no installment in the notification', async () => {
        const intent = await createIntent(server, seller.token);
        await pay(intent.payment_intent_id, cardForm(APPROVED, { method: 'debit', installments: '5' }));
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment).toMatchObject({ method: 'debit' });
        expect((delivery.payload as any).payment.installment).toBeUndefined();
      });

      it('a sandbox wallet pays with its own approved card: reported as credit, no card data stored', async () => {
        const intent = await createIntent(server, seller.token);
        const res = await pay(intent.payment_intent_id, { method: 'google_pay' });
        expect(res.headers.location).toContain('/success?');
        expect((await paymentsOf(intent.payment_intent_id))[0]).toMatchObject({ method: 'google_pay', card_bin: null, card_last_four: null, status: 'Authorized' });
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment.method).toBe('credit');
      });

      it('pre-authorization: the intent is authorized and the notification carries its payment_id for the capture', async () => {
        const intent = await createIntent(server, seller.token, () => {}, 'PaymentIntentRequestPreauthorization');
        await pay(intent.payment_intent_id, cardForm(APPROVED));
        const row = await intentRow(intent.payment_intent_id);
        expect(row.status).toBe('authorized');
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment.result).toMatchObject({ status: 'Authorized', payment_id: row.payment_id });
      });

      it('card verification: nothing charged, the card vaulted with bin and last four, card_id notified', async () => {
        const intent = await createIntent(server, seller.token, () => {}, 'PaymentIntentRequestCardVerification');
        await pay(intent.payment_intent_id, cardForm('5555555555554444'));
        const row = await intentRow(intent.payment_intent_id);
        expect(row).toMatchObject({ status: 'verified', card_bin: '555555', card_last_four: '4444' });
        const vault = (await server.store.query<any>(`SELECT * FROM vault_cards WHERE card_id = $1`, [row.card_id])).rows[0];
        expect(vault).toMatchObject({ seller_id: seller.sellerId, bin: '555555', last_four: '4444', brand: 'Mastercard', expiration_month: '12', expiration_year: '30' });
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.payment_intent_id === intent.payment_intent_id)!;
        expect((delivery.payload as any).payment).toMatchObject({ amount: 0, currency: 'BRL', result: { status: 'Authorized', card_id: row.card_id, return_message: 'Card verified' } });
        expect((delivery.payload as any).product).toBeUndefined();
      });

      it.each([
        [{ card_number: '4111111111111112' }, 'The card number is not valid: check the digits.'],
        [{ expiry: '01/20' }, 'The card has expired.'],
        [{ expiry: '13/30' }, 'The expiry date must be MM/YY.'],
        [{ security_code: '12' }, 'The security code has 3 digits.'],
        [{ cardholder_name: '' }, 'Write the name as it is on the card.'],
        [{ method: 'bankslip' }, 'Choose one of the payment methods offered.'],
        [{ method: 'debit', card_number: '6062825624254001' }, 'This debit card (Hipercard) is not accepted here.'],
      ])('refuses the form %j on the page (422), storing nothing and echoing no card data', async (change, message) => {
        const intent = await createIntent(server, seller.token);
        const res = await pay(intent.payment_intent_id, cardForm(APPROVED, change as Record<string, string>));
        expect(res.status).toBe(422);
        expect(res.text).toContain(message.replace(/&/g, '&amp;'));
        expect(res.text).not.toContain(APPROVED);
        expect(await paymentsOf(intent.payment_intent_id)).toEqual([]);
        expect((await intentRow(intent.payment_intent_id)).status).toBe('created');
      });

      it.each([
        ['success_url', 'http://'],
        ['success_url', 'http://%zz/'],
        ['error_url', 'http://[::1/'],
        ['error_url', 'https://'],
      ])('a stored %s a browser cannot follow (%s, stored before the rule): a 409 page, nothing charged; paying works once it is fixed', async (column, bad) => {
        const owner = await createSeller(server);
        await configureCheckout(server, owner.token, MERCHANT);
        await server.store.query(`UPDATE web_checkout_configurations SET ${column} = $1 WHERE seller_id = $2`, [bad, owner.sellerId]);
        const { payment_intent_id: id } = await createIntent(server, owner.token);
        const notAvailable = `<p id="message">This checkout is not taking payments at the moment: the store&#39;s return address is not valid. Please contact the store.</p>`;
        for (const res of [await page(id), await pay(id, cardForm(APPROVED)), await pay(id, cardForm(DENIED))]) {
          expect(res.status).toBe(409);
          expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
          expect(res.headers.location).toBeUndefined();
          expect(res.text).toContain('<h2 id="heading">Not available</h2>');
          expect(res.text).toContain(notAvailable);
        }
        expect(await paymentsOf(id)).toEqual([]);
        expect(await intentRow(id)).toMatchObject({ status: 'created', payment_id: null, checkout_id: null });
        expect(await deliveriesOf(owner)).toEqual([]);

        await configureCheckout(server, owner.token, MERCHANT); // the merchant fixes its URLs
        const paid = await pay(id, cardForm(APPROVED));
        expect(paid.status).toBe(303);
        expect(paid.headers.location).toBe(`${MERCHANT.url}/success?payment_intent_id=${id}`);
        expect(await paymentsOf(id)).toHaveLength(1);
      });

      it("keeps the merchant's own query on its return addresses as written, the intent's id appended (a signed URL still verifies)", async () => {
        const owner = await createSeller(server);
        await configureCheckout(server, owner.token, MERCHANT);
        const query = 'next=%2Fcart%20x&flag&sig=a%2Bb~&payment_intent_id=stale&&note=caf%C3%A9+1';
        const urls = { success_url: `${MERCHANT.url}/success?${query}#top`, error_url: `${MERCHANT.url}/error?${query}` };
        const configured = await server.http.patch(`${WC}/technical-configurations`).set('Authorization', `Bearer ${owner.token}`).send(urls);
        expect(configured.status).toBe(200);
        const kept = 'next=%2Fcart%20x&flag&sig=a%2Bb~&&note=caf%C3%A9+1';
        const approved = (await createIntent(server, owner.token)).payment_intent_id;
        const paid = await pay(approved, cardForm(APPROVED));
        expect(paid.status).toBe(303);
        expect(paid.headers.location).toBe(`${MERCHANT.url}/success?${kept}&payment_intent_id=${approved}#top`);
        const denied = (await createIntent(server, owner.token)).payment_intent_id;
        const refused = await pay(denied, cardForm(DENIED));
        expect(refused.status).toBe(303);
        expect(refused.headers.location).toBe(`${MERCHANT.url}/error?${kept}&payment_intent_id=${denied}`);
      });

      it('without URLs or notification configured: a result page, and nothing enqueued', async () => {
        const intent = await createIntent(server, plain.token);
        const ok = await pay(intent.payment_intent_id, cardForm(APPROVED));
        expect(ok.status).toBe(200);
        expect(ok.text).toContain('Payment authorized');
        const other = await createIntent(server, plain.token);
        const denied = await pay(other.payment_intent_id, cardForm(DENIED));
        expect(denied.status).toBe(200);
        expect(denied.text).toContain('Insufficient funds. You can try again with another card.');
        expect(denied.text).toContain(`href="/checkout/${other.payment_intent_id}"`);
        expect(await deliveriesOf(plain)).toEqual([]);
      });
    });

    describe('payment link pages', () => {
      const linkPage = (shortId: string) => server.http.get(`/pay/${shortId}`);
      /** The form's post, and the result page its 303 leads to (a form refused is answered in place). */
      const buy = (shortId: string, form: Record<string, string>) => server.http.post(`/pay/${shortId}`).type('form').send(form).redirects(1);
      const orderIdOf = (html: string) => /order ([0-9a-f-]{36})/.exec(html)?.[1];
      const order = (link: any, orderId: string) =>
        server.http.get(`/dpy/payment-link/v1/payment-links/${link.link_id}/orders/${orderId}`).set('Authorization', `Bearer ${seller.token}`);

      it('shows the products and shipping, and a bought link yields an approved order, a sale and a payment_link notification', async () => {
        const link = await createLink(server, seller.sellerId, { shipping_amount: 1500, request_delivery_address: true });
        const res = await linkPage(link.short_id);
        expect(res.status).toBe(200);
        // A link's page shows the result itself: its form goes to the sandbox only.
        expect(res.headers['content-security-policy']).toMatch(/; form-action 'self'$/);
        expect(res.text).toContain(link.products[0].title);
        expect(res.text).toContain(formatMoney(1500, 'BRL', 'pt-BR'));
        expect(res.text).toContain('Delivery address');
        const missing = await buy(link.short_id, { ...buyerForm(), ...cardForm() });
        expect(missing.status).toBe(422);
        expect(missing.text).toContain('Delivery postal code is required.');
        const bought = await buy(link.short_id, { ...buyerForm(), ...deliveryForm, ...cardForm() });
        expect(bought.status).toBe(200);
        expect(bought.text).toContain('Payment authorized');
        const orderId = orderIdOf(bought.text)!;
        const read = await order(link, orderId);
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({ status: 'approved', amount: link.products[0].amount + 1500, shipping: { shipping_amount: 1500, address: { street: 'Rua da Bahia', postal_code: '30160011' } } });
        expect(read.body.history.map((h: any) => h.status)).toEqual(['pending', 'approved']);
        const linkNow = await server.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${link.short_id}`);
        expect(linkNow.body.successful_sales).toBe(1);
        const delivery = (await deliveriesOf(seller)).find((d: any) => d.payload.order_id === orderId)!;
        const payload = validateCheckoutNotification(delivery.payload);
        expect(payload).toMatchObject({
          mode: 'payment_link',
          checkout_id: read.body.checkout_id,
          reference_code: read.body.reference_code,
          customer: { customer_id: '11144477735', document_number: '11144477735', billing_address: { country: 'BR', postal_code: '30130005' } },
          shipping: { shipping_amount: 1500, address: { street: 'Rua da Bahia' } },
          payment: { amount: read.body.amount, result: { status: 'Authorized' } },
        });
        expect(payload.payment_intent_id).toBeUndefined();
      });

      it('answers the paid form with a 303 to the order\'s result page, which a reload shows again without paying again', async () => {
        const link = await createLink(server, seller.sellerId);
        const sales = async () => (await server.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${link.short_id}`)).body.successful_sales;
        const orders = async () => (await server.store.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_link_orders WHERE link_id = $1', [link.link_id])).rows[0]!.n;
        const posted = await server.http.post(`/pay/${link.short_id}`).type('form').send({ ...buyerForm(), ...cardForm() });
        expect(posted.status).toBe(303);
        expect(posted.headers['cache-control']).toBe('no-store');
        const location = posted.headers.location as string;
        const orderId = new RegExp(`^/pay/${link.short_id}/orders/([0-9a-f-]{36})$`).exec(location)?.[1];
        expect(orderId).toBeDefined();
        expect((await order(link, orderId!)).body.status).toBe('approved');
        for (let reload = 0; reload < 3; reload++) {
          const page = await server.http.get(location);
          expect(page.status).toBe(200);
          expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
          expect(page.headers['cache-control']).toBe('no-store');
          expect(page.text).toContain(`Thank you. Your order ${orderId} is confirmed.`);
        }
        expect({ sales: await sales(), orders: await orders() }).toEqual({ sales: 1, orders: 1 });
        // A denied payment's page says so and offers the link again.
        const denied = await buy(link.short_id, { ...buyerForm(), ...cardForm(DENIED) });
        expect(denied.text).toContain('Payment denied');
        expect(denied.text).toContain(`href="/pay/${link.short_id}"`);
        // No page for an order of another link, an unknown order, or an id that is no UUID.
        const other = await createLink(server, seller.sellerId);
        for (const path of [`/pay/${other.short_id}/orders/${orderId}`, `/pay/${link.short_id}/orders/${crypto.randomUUID()}`, `/pay/${link.short_id}/orders/not-a-uuid`, `/pay/nolink/orders/${orderId}`]) {
          const res = await server.http.get(path);
          expect(res.status).toBe(404);
          expect(res.text).toContain('There is no such order on this payment link');
          expect(res.text).not.toContain(orderId);
        }
      });

      it('a denied card denies the order (no sale), and a 3DS failure gives authentication_denied', async () => {
        const link = await createLink(server, seller.sellerId);
        const denied = await buy(link.short_id, { ...buyerForm(), ...cardForm(DENIED) });
        expect(denied.text).toContain('Payment denied');
        expect((await order(link, orderIdOf(denied.text)!)).body.status).toBe('denied');
        const threeds = await buy(link.short_id, { ...buyerForm(), ...cardForm(THREEDS_DENIED) });
        expect((await order(link, orderIdOf(threeds.text)!)).body.status).toBe('authentication_denied');
        const fraud = await buy(link.short_id, { ...buyerForm({ document_number: '12345678900' }), ...cardForm() });
        expect(fraud.text).toContain('Denied by fraud prevention');
        expect((await server.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${link.short_id}`)).body.successful_sales).toBe(0);
      });

      it('honours max_orders: sold out after the last sale', async () => {
        const link = await createLink(server, seller.sellerId, { max_orders: 1 });
        expect((await buy(link.short_id, { ...buyerForm(), ...cardForm() })).text).toContain('Payment authorized');
        for (const res of [await linkPage(link.short_id), await buy(link.short_id, { ...buyerForm(), ...cardForm() })]) {
          expect(res.status).toBe(410);
          expect(res.text).toContain('This payment link is sold out.');
        }
      });

      it('refuses INACTIVE (403), expired (410) and unknown (404) links with a clear page, creating no order', async () => {
        const inactive = await createLink(server, seller.sellerId);
        await setLinkColumns(server.store, inactive.link_id, { status: 'INACTIVE' });
        const expired = await createLink(server, seller.sellerId);
        await setLinkColumns(server.store, expired.link_id, { expiration: new Date(Date.now() - 1000).toISOString() });
        expect((await linkPage(inactive.short_id)).status).toBe(403);
        expect((await buy(inactive.short_id, { ...buyerForm(), ...cardForm() })).text).toContain('not taking payments');
        expect((await linkPage(expired.short_id)).text).toContain('This payment link has expired.');
        expect((await buy(expired.short_id, { ...buyerForm(), ...cardForm() })).status).toBe(410);
        expect((await linkPage('nOsUcHiD')).status).toBe(404);
        const orders = await server.store.query(`SELECT 1 FROM payment_link_orders WHERE link_id = ANY($1::uuid[])`, [[inactive.link_id, expired.link_id]]);
        expect(orders.rowCount).toBe(0);
      });
    });

    it('no card number or security code anywhere in the database or the logs', async () => {
      const dump = await databaseDump(server);
      expect(dump).toContain('411111'); // bin, to show the dump is real
      for (const pan of [APPROVED, DENIED, THREEDS_DENIED, '5555555555554444']) {
        expect(dump).not.toContain(pan);
        expect(server.logs.text).not.toContain(pan);
      }
      expect(dump).not.toMatch(/"security_code"|"card_number"/);
    });
  });
}
