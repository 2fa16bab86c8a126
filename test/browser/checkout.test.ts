// The whole web checkout flow in Debian's Chromium: an intent created through the API, its
// redirect_url opened, a card typed, the browser back on the merchant's success_url or error_url,
// and the merchant's notification URL receiving the result; a payment link bought the same way.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../contract/money.ts';
import { verifyCheckoutNotification } from '../../client/webhooks/verify.ts';
import { createApp } from '../../server/app.ts';
import { notificationDeliveryWorker } from '../../server/notifications/delivery-worker.ts';
import { createLogger } from '../../server/http/logging.ts';
import { ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { migrate } from '../../server/store/migrate.ts';
import { type Store } from '../../server/store/store.ts';
import { openTestStore } from '../server/support/stores.ts';
import { launchBrowser } from '../support/browser.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { APPROVED, configureCheckout, createIntent, DENIED, MERCHANT_CREDENTIALS, startMerchant, type Merchant } from '../server/support/checkout.ts';
import { createLink, createSeller, type SandboxSeller } from '../server/support/payment-link.ts';
import { CapturedLogs, testConfig, type TestServer } from '../server/support/server.ts';

const ARTIFACTS = new URL('../../dist/test-artifacts/', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('hosted checkout in Chromium', () => {
  let browser: Browser;
  let store: Store;
  let http: Server;
  let server: TestServer;
  let merchant: Merchant;
  let seller: SandboxSeller;
  let worker: ReturnType<typeof notificationDeliveryWorker>;
  let page: Page;

  beforeAll(async () => {
    // The server must know its own address before it starts: redirect_url is built from it.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const config = testConfig({ apiSpec: PLATFORM_BUNDLE, publicBaseUrl: url, notificationPollIntervalMs: 20, notificationRetryBaseMs: 50 });
    const logs = new CapturedLogs();
    const logger = createLogger('info', logs);
    store = await openTestStore(config);
    await migrate(store);
    await ensureDemoSeller(store, config.demoClient, logger);
    const app = await createApp({ store, config, logger });
    http = app.listen(port, '127.0.0.1');
    await new Promise((resolve) => http.once('listening', resolve));
    server = { app, store, config, logs, url, http: request(url), close: async () => {} };
    worker = notificationDeliveryWorker({ store, logger, config });
    worker.start();
    merchant = await startMerchant();
    seller = await createSeller(server, { trade_name: 'Café da Serra' });
    await configureCheckout(server, seller.token, merchant);
    browser = await launchBrowser();
    page = await browser.newPage({ locale: 'pt-BR', timezoneId: 'America/Sao_Paulo' });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000); // a server and Chromium: past 30 s on a loaded machine (vitest.config.ts)

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await merchant?.close();
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
    await store?.close();
  });

  async function typeCard(number: string) {
    await page.fill('#card_number', number);
    await page.fill('#cardholder_name', 'MARIA SILVA');
    await page.fill('#expiry', '12/30');
    await page.fill('#security_code', '123');
  }

  const notificationsFor = (key: string, value: string) =>
    merchant.notifications.filter((n) => (JSON.parse(n.body) as Record<string, unknown>)[key] === value);

  it('pays an intent with the approved card: lands on success_url, and the merchant gets one valid notification', async () => {
    const intent = await createIntent(server, seller.token);
    await page.goto(intent.redirect_url);
    expect((await page.locator('header').innerText()).trim()).toContain('Café da Serra');
    expect((await page.locator('#total').innerText()).trim()).toBe(formatMoney(intent.request.payment.amount, 'BRL', 'pt-BR'));
    const methods = await page.locator('input[name=method]').evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    expect(methods).toEqual(['credit', 'debit', 'google_pay', 'apple_pay']);
    await page.screenshot({ path: `${ARTIFACTS}checkout-page.png`, fullPage: true });

    // An invalid number never leaves the page.
    await typeCard('4111111111111112');
    await page.click('#pay-button');
    expect((await page.locator('#form-error').innerText()).trim()).toBe('The card number is not valid: check the digits.');
    expect(page.url()).toBe(intent.redirect_url);

    await page.fill('#card_number', APPROVED);
    await Promise.all([page.waitForURL(`${merchant.url}/success?payment_intent_id=${intent.payment_intent_id}`), page.click('#pay-button')]);
    expect((await page.locator('#merchant').innerText()).trim()).toBe('Thank you for your order');

    await until(() => notificationsFor('payment_intent_id', intent.payment_intent_id).length === 1);
    const [received] = notificationsFor('payment_intent_id', intent.payment_intent_id);
    expect(received!.headers.authorization).toBe(`Basic ${Buffer.from(`${MERCHANT_CREDENTIALS.user}:${MERCHANT_CREDENTIALS.password}`).toString('base64')}`);
    const payload = verifyCheckoutNotification(received!.headers, received!.body, MERCHANT_CREDENTIALS);
    expect(payload).toMatchObject({ mode: 'instant', payment: { amount: intent.request.payment.amount, result: { status: 'Authorized' } } });
    expect(payload.frontend).toMatchObject({ sales_channel: 'WEB', timezone: 'America/Sao_Paulo', locale: 'pt-BR', link: intent.redirect_url });
  });

  it('a denied card lands on error_url and the merchant gets a Denied notification', async () => {
    const intent = await createIntent(server, seller.token);
    await page.goto(intent.redirect_url);
    await typeCard(DENIED);
    await Promise.all([page.waitForURL(`${merchant.url}/error?payment_intent_id=${intent.payment_intent_id}`), page.click('#pay-button')]);
    await until(() => notificationsFor('payment_intent_id', intent.payment_intent_id).length === 1);
    const payload = verifyCheckoutNotification(notificationsFor('payment_intent_id', intent.payment_intent_id)[0]!.headers, notificationsFor('payment_intent_id', intent.payment_intent_id)[0]!.body, MERCHANT_CREDENTIALS);
    expect(payload.payment.result).toMatchObject({ status: 'Denied', return_code: '51' });
  });

  it('sends a link page\'s card form nowhere but the sandbox: pointed at another origin, the page\'s form-action blocks it', async () => {
    const link = await createLink(server, seller.sellerId);
    const hits: string[] = [];
    const elsewhere = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.end('received');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`${server.url}/pay/${link.short_id}`);
      const blocked = page.waitForEvent('console', { predicate: (message) => message.text().includes('form-action'), timeout: 10_000 });
      // As an injected script would: the form's action changed, then sent without the page's own checks.
      await page.evaluate((action) => {
        const form = document.querySelector<HTMLFormElement>('#pay')!;
        form.action = action;
        form.submit();
      }, `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/collect`);
      expect((await blocked).text()).toContain("form-action 'self'");
      expect(hits).toEqual([]);
      expect(page.url()).toBe(`${server.url}/pay/${link.short_id}`);
    } finally {
      elsewhere.closeAllConnections(); // the browser may have opened one it never sent on
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('lands on a success_url that redirects again (http to https, apex to www): no form-action stops the chain', async () => {
    // The merchant's own redirect, to another origin: browsers apply a page's form-action to each hop.
    const hop = createServer((req, res) => res.writeHead(302, { location: `${merchant.url}/success${req.url!.slice(req.url!.indexOf('?'))}` }).end());
    await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
    try {
      const hopUrl = `http://127.0.0.1:${(hop.address() as AddressInfo).port}`;
      await configureCheckout(server, seller.token, { url: hopUrl });
      const intent = await createIntent(server, seller.token);
      await page.goto(intent.redirect_url);
      await typeCard(APPROVED);
      await Promise.all([page.waitForURL(`${merchant.url}/success?payment_intent_id=${intent.payment_intent_id}`), page.click('#pay-button')]);
    } finally {
      await configureCheckout(server, seller.token, merchant);
      hop.closeAllConnections();
      await new Promise((resolve) => hop.close(resolve));
    }
  });

  it('buys a payment link: the order is readable as approved through the API and notified with mode payment_link', async () => {
    const link = await createLink(server, seller.sellerId, { shipping_amount: 1500 });
    await page.goto(`${server.url}/pay/${link.short_id}`);
    expect((await page.locator('#total').innerText()).trim()).toBe(formatMoney(link.products[0].amount + 1500, 'BRL', 'pt-BR'));
    for (const [field, value] of Object.entries({ first_name: 'Ana', last_name: 'Costa', email: 'ana.costa@example.com', document_number: '11144477735', street: 'Avenida Afonso Pena', number: '1500', postal_code: '30130005' })) {
      await page.fill(`#${field}`, value);
    }
    await typeCard(APPROVED);
    // The post answers 303 to the order's result page (Post/Redirect/Get).
    await Promise.all([page.waitForURL(new RegExp(`^${server.url}/pay/${link.short_id}/orders/[0-9a-f-]{36}$`)), page.click('#pay-button')]);
    expect((await page.locator('#heading').innerText()).trim()).toBe('Payment authorized');
    const orderId = /order ([0-9a-f-]{36})/.exec(await page.locator('#message').innerText())![1]!;
    expect(page.url()).toBe(`${server.url}/pay/${link.short_id}/orders/${orderId}`);
    // A reload shows the result again and buys nothing again.
    await page.reload();
    expect((await page.locator('#heading').innerText()).trim()).toBe('Payment authorized');
    expect((await server.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${link.short_id}`)).body.successful_sales).toBe(1);
    const order = await server.http.get(`/dpy/payment-link/v1/payment-links/${link.link_id}/orders/${orderId}`).set('Authorization', `Bearer ${seller.token}`);
    expect(order.status).toBe(200);
    expect(order.body).toMatchObject({ status: 'approved', amount: link.products[0].amount + 1500 });
    await until(() => notificationsFor('order_id', orderId).length === 1);
    const payload = verifyCheckoutNotification(notificationsFor('order_id', orderId)[0]!.headers, notificationsFor('order_id', orderId)[0]!.body, MERCHANT_CREDENTIALS);
    expect(payload).toMatchObject({ mode: 'payment_link', reference_code: order.body.reference_code, checkout_id: order.body.checkout_id });
  });
});
