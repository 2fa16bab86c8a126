// The hosted pages are for people: any address under `/checkout` and `/pay` answers a page, never
// an API's JSON, whatever its spelling (letter case, trailing or doubled slashes, percent-encoding,
// dot segments, `;` parameters, backslashes), and a page's address asked with a method it does not
// take is a 405 page naming the ones it takes. Nothing of it pays anything. Sent on the raw socket:
// an HTTP client would normalise dot segments before sending.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spellingsOf } from '../support/path-spellings.ts';
import { rawRequest } from '../support/raw-http.ts';
import { buyerForm, cardForm, WC } from './support/checkout.ts';
import { createLink, createSeller, type SandboxSeller } from './support/payment-link.ts';
import { startPlatformServer, type TestServer } from './support/server.ts';
import { contractExample } from './support/web-checkout.ts';

describe('hosted page addresses', () => {
  let server: TestServer;
  let seller: SandboxSeller;
  let intentId: string;
  let shortId: string;
  let orderPath: string;
  const count = async (table: string) => Number((await server.store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  const raw = (method: string, path: string, body?: string) =>
    rawRequest(server.url, { method, path, headers: body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}, body });
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

  beforeAll(async () => {
    server = await startPlatformServer('pglite');
    seller = await createSeller(server);
    const intent = await server.http.post(`${WC}/payment-intent`).set('Authorization', `Bearer ${seller.token}`).send(contractExample('PaymentIntentRequestStandard'));
    intentId = intent.body.payment_intent_id;
    shortId = (await createLink(server, seller.sellerId)).short_id;
    const paid = await server.http.post(`/pay/${shortId}`).type('form').send({ ...buyerForm(), ...cardForm() });
    expect(paid.status).toBe(303);
    orderPath = String(paid.headers.location);
  });
  afterAll(() => server?.close());

  const expectPage = (answer: { status: number; contentType: string; text: string }, status: number, heading: string) => {
    expect(answer.status).toBe(status);
    expect(answer.contentType).toBe('text/html');
    expect(answer.text).toContain(`<h2 id="heading">${heading}</h2>`);
  };

  it.each([
    ['a trailing slash', (id: string) => `/checkout/${id}/`],
    ['upper case', (id: string) => `/CHECKOUT/${id}`],
    ['a doubled slash', (id: string) => `/checkout//${id}`],
    ['two leading slashes', (id: string) => `//checkout/${id}`],
    ['no id', () => '/checkout'],
    ['a segment more', (id: string) => `/checkout/${id}/pay/more`],
    ['an encoded letter and an escape that does not decode', () => '/%63heckout/%ff'],
    ['an encoded prefix run into an undecodable escape', () => '/%63heckout%ff'],
    ['a dot segment ahead of it', (id: string) => `/./checkout/${id}`],
    ['a segment and its undoing ahead of it', (id: string) => `/x/../checkout/${id}`],
    ['an encoded dot segment ahead of it', (id: string) => `/%2e/checkout/${id}`],
    ['a backslash ahead of it', (id: string) => `/\\checkout/${id}`],
  ])("another spelling of a checkout's address (%s) is the 404 page, not JSON", async (_name, path) => {
    expectPage(await raw('GET', path(intentId)), 404, 'Checkout not found');
  });

  it.each([
    ['GET', () => `/checkout/${intentId}/pay`, 'POST'],
    ['OPTIONS', () => `/checkout/${intentId}/pay`, 'POST'],
    ['POST', () => `/checkout/${intentId}`, 'GET, HEAD'],
    ['PUT', () => `/checkout/${intentId}`, 'GET, HEAD'],
    ['DELETE', () => `/pay/${shortId}`, 'GET, HEAD, POST'],
    ['OPTIONS', () => `/pay/${shortId}`, 'GET, HEAD, POST'],
    ['PATCH', () => orderPath, 'GET, HEAD'],
  ])('%s of a page address that does not take it is a 405 page with Allow', async (method, path, allow) => {
    const res = await server.http[method.toLowerCase() as 'get'](path());
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain('This address does not show a page');
  });

  it('still serves each page, and HEAD as its GET', async () => {
    expect((await server.http.get(`/checkout/${intentId}`)).status).toBe(200);
    expect((await server.http.head(`/checkout/${intentId}`)).status).toBe(200);
    expect((await server.http.get(`/pay/${shortId}`)).status).toBe(200);
    expect((await server.http.get(orderPath)).status).toBe(200);
  });

  /**
   * Whether a spelling is the page's own address once its fragment is dropped and its escapes decoded
   * (the id's UUID in upper case is the same intent): the page itself, paid as such.
   */
  const sameAddress = (spelled: string, path: string) => {
    try {
      return decodeURIComponent(spelled.replace(/#.*$/, '')).replace(new RegExp(intentId, 'i'), intentId) === path;
    } catch {
      return false;
    }
  };

  it('pays nothing through another spelling of a payment form address: each is a 404 or a 405 page', async () => {
    const [payments, orders] = [await count('checkout_payments'), await count('payment_link_orders')];
    const card = form(cardForm());
    const bought = form({ ...buyerForm(), ...cardForm() });
    const forms = [
      ...[0, 1].flatMap((nth) => spellingsOf(`/checkout/${intentId}/pay`, nth)).map((path) => [path, card, `/checkout/${intentId}/pay`] as const),
      ...spellingsOf(`/pay/${shortId}`).map((path) => [path, bought, `/pay/${shortId}`] as const),
    ].filter(([path, , real]) => !sameAddress(path, real));
    const notPages: string[] = [];
    for (const [path, body] of forms) {
      const answer = await raw('POST', path, body);
      if (answer.contentType !== 'text/html' || ![404, 405].includes(answer.status)) notPages.push(`POST ${path}: ${answer.status} ${answer.contentType}`);
    }
    expect(notPages).toEqual([]);
    expect(forms.length).toBeGreaterThan(40);
    expect([await count('checkout_payments'), await count('payment_link_orders')]).toEqual([payments, orders]);
  });

  it("answers every other spelling of a page's address with a page, never JSON", async () => {
    const notPages: string[] = [];
    for (const path of [...spellingsOf(`/checkout/${intentId}`), ...spellingsOf(`/pay/${shortId}`), ...spellingsOf(orderPath)]) {
      const answer = await raw('GET', path);
      // The page itself (the id's UUID in upper case is the same intent) or a 404 page.
      if (answer.contentType !== 'text/html' || answer.status >= 500) notPages.push(`GET ${path}: ${answer.status} ${answer.contentType}`);
    }
    expect(notPages).toEqual([]);
  });

  it("leaves the API's addresses to the API: a 404 there is still in its area's JSON", async () => {
    for (const path of ['/payments', '/payment-intents', '/checkouts/x', '/dpy/payment-link/v1/nope']) {
      const answer = await raw('GET', path);
      expect(answer.status, path).toBe(404);
      expect(answer.contentType, path).toBe('application/json');
    }
  });

  it('logged no error', () => {
    expect(server.logs.lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
