// The payment link API: every operation with every status it can answer, the list's parameters,
// the link status evaluated at call time, orders and their state machine, image uploads, guid_error
// and seller isolation; on every store.
import { createHash } from 'node:crypto';
import { unendedRequest } from '../support/unended-request.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canOrderMove, createOrder, orderTotal, referenceCode, updateOrderStatus } from '../../server/payment-link/orders.ts';
import { checkDateRange, checkProductImage, checkSellerGuid, detectImageType, foldCase, listQuery } from '../../server/payment-link/service.ts';
import { BASE, createLink, createSeller, GIF, JPEG, mintToken, PNG, product, setLinkColumns, STORES, upload, WEBP, type SandboxSeller } from './support/payment-link.ts';
import { expectNoStackTrace, type TestServer, startPlatformServer } from './support/server.ts';

const UNKNOWN_ID = '0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b';
const customer = { first_name: 'Mariana', last_name: 'Souza', name: 'Mariana Souza', email: 'mariana@example.com' };
const GUID_ERROR = {
  error_code: 'guid_error',
  message: 'The seller id must be a valid GUID',
  status_code: 400,
  details: [{ message: 'x-seller-id must be a valid GUID', path: 'token.x-seller-id' }],
};
const NOT_FOUND = { error_code: 'payment_link_not_found', message: 'Payment Link not found', status_code: 404 };

describe('rules by name', () => {
  it('checkSellerGuid refuses a seller id that is not a GUID', () => {
    expect(() => checkSellerGuid('3fa85f64-5717-4562-b3fc-2c963f66afa6')).not.toThrow();
    expect(() => checkSellerGuid('seller-42')).toThrow('The seller id must be a valid GUID');
  });

  it('foldCase folds per code point, locale-free', () => {
    expect(foldCase('FOTOGRAFIA Ção')).toBe('fotografia ção');
    expect(foldCase('ΣΟΦΟΣ ς')).toBe('σοφοσ σ');
    expect(foldCase('İ')).toBe('İ'); // its lower case is two code points: kept
  });

  it('checkDateRange refuses a start that is not before its end', () => {
    const [a, b] = [new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z')];
    expect(() => checkDateRange(a, b, ['s', 'e'])).not.toThrow();
    expect(() => checkDateRange(b, a, ['s', 'e'])).toThrow('s must be before e');
    expect(() => checkDateRange(a, a, ['s', 'e'])).toThrow('s must be before e');
    expect(() => checkDateRange(a, undefined, ['s', 'e'])).not.toThrow();
  });

  it('listQuery applies the defaults: page 1, limit 10, created_at desc', () => {
    expect(listQuery({}).page).toEqual({ sort: 'created_at', direction: 'desc', limit: 10, offset: 0 });
    expect(listQuery({ page: '3', limit: '20', sort: 'label', sort_type: 'asc' }).page).toEqual({ sort: 'label', direction: 'asc', limit: 20, offset: 40 });
  });

  it('detectImageType reads the magic bytes', () => {
    expect(detectImageType(PNG)).toBe('image/png');
    expect(detectImageType(JPEG)).toBe('image/jpeg');
    expect(detectImageType(WEBP)).toBe('image/webp');
    expect(detectImageType(GIF)).toBeUndefined();
    expect(detectImageType(Buffer.from('RIFF0000WAVE'))).toBeUndefined();
  });

  it('checkProductImage: 400 missing or empty, 413 over 5 MiB, 415 wrong or mismatched type', () => {
    const part = (buffer: Buffer, mimetype: string, fieldname = 'image') => [{ fieldname, mimetype, size: buffer.length, buffer }];
    expect(checkProductImage(part(PNG, 'image/png'))).toEqual({ contentType: 'image/png', content: PNG });
    expect(() => checkProductImage(undefined)).toThrow('The request body is invalid');
    expect(() => checkProductImage(part(PNG, 'image/png', 'photo'))).toThrow('The request body is invalid');
    expect(() => checkProductImage(part(Buffer.alloc(0), 'image/png'))).toThrow('The request body is invalid');
    expect(() => checkProductImage(part(Buffer.alloc(5 * 1024 * 1024 + 1), 'image/png'))).toThrow('The image must not exceed 5 MiB (5242880 bytes)');
    expect(() => checkProductImage(part(GIF, 'image/gif'))).toThrow('The image must be image/png, image/jpeg or image/webp');
    expect(() => checkProductImage(part(JPEG, 'image/png'))).toThrow('The image content is not image/png');
  });

  it('orderTotal is Σ(amount × quantity) + shipping; referenceCode uses the first order prefix', () => {
    const products = [product({ amount: 34990 }), product({ amount: 1000, quantity: 3, order_prefix: 'FOTO' })] as never;
    expect(orderTotal({ products, shippingAmount: 2500 })).toBe(34990 + 3000 + 2500);
    expect(referenceCode({ products }, 13)).toBe('FOTO-000013');
    expect(referenceCode({ products: [product()] as never }, 1)).toBe('ORDER-000001');
  });

  it('canOrderMove follows the order transitions', () => {
    for (const to of ['approved', 'denied', 'authentication_denied', 'paid'] as const) expect(canOrderMove('pending', to)).toBe(true);
    expect(canOrderMove('pending', 'refunded')).toBe(false);
    expect(canOrderMove('approved', 'refunded')).toBe(true);
    expect(canOrderMove('paid', 'refunded')).toBe(true);
    expect(canOrderMove('approved', 'denied')).toBe(false);
    for (const final of ['denied', 'authentication_denied', 'refunded'] as const) {
      for (const to of ['pending', 'approved', 'paid', 'refunded', 'denied'] as const) expect(canOrderMove(final, to)).toBe(false);
    }
  });
});

describe.each(STORES)('payment link API (%s)', (kind) => {
  let server: TestServer;
  let a: SandboxSeller;
  let b: SandboxSeller;
  let guidToken: string;
  const get = (path: string, token?: string) => {
    const req = server.http.get(`${BASE}${path}`);
    return token ? req.set('Authorization', `Bearer ${token}`) : req;
  };
  beforeAll(async () => {
    server = await startPlatformServer(kind);
    a = await createSeller(server, { trade_name: 'Seller A' });
    b = await createSeller(server, { trade_name: 'Seller B' });
    guidToken = await mintToken(server, 'seller-42');
  });
  afterAll(() => server?.close());

  /** 401 without a token and 400 guid_error with a non-GUID seller id, for one protected call. */
  async function expectProtected(call: (token?: string) => PromiseLike<{ status: number; body: any; headers: any }>) {
    const anonymous = await call();
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error_code: 'unauthorized', message: 'Missing bearer token', status_code: 401 });
    expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="payment-platform"');
    const guid = await call(guidToken);
    expect(guid.status).toBe(400);
    expect(guid.body).toEqual(GUID_ERROR);
    expectNoStackTrace(guid.body);
  }

  describe('GET /sellers', () => {
    it('answers the token’s seller, every service and method key', async () => {
      const res = await get('/sellers', a.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(a.body.seller);
      expect(res.body.trade_name).toBe('Seller A');
      expect((await get('/sellers', b.token)).body.seller_id).toBe(b.sellerId);
    });

    it('answers 404 seller_not_found for a token whose seller does not exist', async () => {
      const res = await get('/sellers', await mintToken(server, UNKNOWN_ID));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error_code: 'seller_not_found', message: 'Seller not found', status_code: 404 });
    });

    it('answers 401 and 400 guid_error', () => expectProtected((t) => get('/sellers', t)));
  });

  describe('GET /payment-links/business-configurations', () => {
    it('answers the saved defaults of the token’s seller', async () => {
      const res = await get('/payment-links/business-configurations', a.token);
      expect(res.status).toBe(200);
      expect(res.body.payment).toEqual(a.body.seller.payments);
      expect(res.body.currency).toBe('BRL');
    });

    it('answers 404 business_configuration_not_found when none is saved, and seller_not_found for an unknown seller', async () => {
      const c = await createSeller(server);
      await server.store.query('DELETE FROM business_configurations WHERE seller_id = $1', [c.sellerId]);
      const none = await get('/payment-links/business-configurations', c.token);
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ error_code: 'business_configuration_not_found', message: 'Business configuration not found', status_code: 404 });
      const unknown = await get('/payment-links/business-configurations', await mintToken(server, UNKNOWN_ID));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error_code: 'seller_not_found', message: 'Seller not found', status_code: 404 });
    });

    it('answers 401 and 400 guid_error', () => expectProtected((t) => get('/payment-links/business-configurations', t)));
  });

  describe('GET /payment-links', () => {
    let s: SandboxSeller;
    const links: Record<string, Record<string, any>> = {};
    const list = (query: string, token = s.token) => get(`/payment-links${query}`, token);
    const ids = (res: { body: Array<{ label: string }> }) => res.body.map((l) => l.label);

    beforeAll(async () => {
      s = await createSeller(server);
      const specs: Array<[string, Record<string, unknown>, string]> = [
        ['Alpha', { expiration: '2040-01-01T00:00:00Z', payment: { credit: { enabled: true } } }, '2026-01-01T10:00:00Z'],
        ['beta 50%_off', { products: [product({ title: 'Fotografia Ção' })], payment: { instant_payment: { enabled: true } } }, '2026-01-02T10:00:00Z'],
        ['Gamma', { expiration: '2035-01-01T00:00:00Z', max_orders: 2 }, '2026-01-03T10:00:00Z'],
        ['delta', {}, '2026-01-04T10:00:00Z'],
        ['Épsilon', { expiration: '2045-01-01T00:00:00Z' }, '2026-01-05T10:00:00Z'],
      ];
      for (const [label, extra, createdAt] of specs) {
        links[label] = await createLink(server, s.sellerId, { label, ...extra });
        await setLinkColumns(server.store, links[label]!.link_id, { created_at: createdAt, updated_at: createdAt });
      }
      // Gamma sold out (EXPIRED now), delta deactivated, Épsilon past its expiration (EXPIRED now).
      await setLinkColumns(server.store, links.Gamma!.link_id, { successful_sales: 2 });
      await setLinkColumns(server.store, links.delta!.link_id, { status: 'INACTIVE', updated_at: '2026-02-01T00:00:00Z' });
      await setLinkColumns(server.store, links['Épsilon']!.link_id, { expiration: '2026-01-06T00:00:00Z' });
      await createLink(server, b.sellerId, { label: 'Alpha of B' });
    });

    it('lists the seller’s links newest first with X-Total-Count, never another seller’s', async () => {
      const res = await list('');
      expect(res.status).toBe(200);
      expect(res.headers['x-total-count']).toBe('5');
      expect(ids(res)).toEqual(['Épsilon', 'delta', 'Gamma', 'beta 50%_off', 'Alpha']);
      expect(res.body.every((l: { seller_id: string }) => l.seller_id === s.sellerId)).toBe(true);
      expect(res.body.map((l: { status: string }) => l.status)).toEqual(['EXPIRED', 'INACTIVE', 'EXPIRED', 'ACTIVE', 'ACTIVE']);
      expect(res.body[4]).toEqual({ ...links.Alpha, created_at: '2026-01-01T10:00:00.000Z', updated_at: '2026-01-01T10:00:00.000Z' });
    });

    it('pages: limit and page, a page past the end is [] with the total', async () => {
      const second = await list('?limit=2&page=2');
      expect(ids(second)).toEqual(['Gamma', 'beta 50%_off']);
      expect(second.headers['x-total-count']).toBe('5');
      const past = await list('?limit=2&page=9');
      expect(past.status).toBe(200);
      expect(past.body).toEqual([]);
      expect(past.headers['x-total-count']).toBe('5');
    });

    it.each([
      ['sort=created_at&sort_type=asc', ['Alpha', 'beta 50%_off', 'Gamma', 'delta', 'Épsilon']],
      ['sort=label&sort_type=asc', ['Alpha', 'beta 50%_off', 'delta', 'Gamma', 'Épsilon']],
      ['sort=label&sort_type=desc', ['Épsilon', 'Gamma', 'delta', 'beta 50%_off', 'Alpha']],
      ['sort=updated_at&sort_type=desc', ['delta', 'Épsilon', 'Gamma', 'beta 50%_off', 'Alpha']],
      ['sort=expiration&sort_type=asc', ['Épsilon', 'Gamma', 'Alpha']], // then the two without expiration
      ['sort=expiration&sort_type=desc', ['Alpha', 'Gamma', 'Épsilon']],
    ])('sorts by %s (links without expiration last)', async (query, expected) => {
      const res = await list(`?${query}`);
      expect(ids(res).slice(0, expected.length)).toEqual(expected);
      if (query.startsWith('sort=expiration')) {
        expect(ids(res).slice(3).sort()).toEqual(['beta 50%_off', 'delta']);
        const noExpiration = [links['beta 50%_off']!.link_id, links.delta!.link_id].sort();
        expect(res.body.slice(3).map((l: { link_id: string }) => l.link_id)).toEqual(noExpiration); // ties by link_id
      }
    });

    it('sorts by status as text and by successful_sales, ties by link_id', async () => {
      const byStatus = await list('?sort=status&sort_type=asc');
      expect(byStatus.body.map((l: { status: string }) => l.status)).toEqual(['ACTIVE', 'ACTIVE', 'EXPIRED', 'EXPIRED', 'INACTIVE']);
      const actives = byStatus.body.slice(0, 2).map((l: { link_id: string }) => l.link_id);
      expect(actives).toEqual([...actives].sort());
      const bySales = await list('?sort=successful_sales&sort_type=desc');
      expect(ids(bySales)[0]).toBe('Gamma');
    });

    it.each([
      ['status=ACTIVE', ['beta 50%_off', 'Alpha']],
      ['status=EXPIRED', ['Épsilon', 'Gamma']],
      ['status=INACTIVE', ['delta']],
      ['payment_type=instant_payment', ['Épsilon', 'delta', 'Gamma', 'beta 50%_off']], // Alpha: credit only
      ['payment_type=credit', ['Épsilon', 'delta', 'Gamma', 'Alpha']], // beta: instant payment only
      ['payment_type=c2p_master', []],
      ['created_at_start=2026-01-02T10:00:00Z&created_at_end=2026-01-04T10:00:00Z', ['Gamma', 'beta 50%_off']],
      ['created_at_start=2026-01-02T07:00:00-03:00', ['Épsilon', 'delta', 'Gamma', 'beta 50%_off']],
      ['expiration_start=2035-01-01T00:00:00Z&expiration_end=2040-01-01T00:00:00Z', ['Gamma']],
      ['expiration_end=2100-01-01T00:00:00Z', ['Épsilon', 'Gamma', 'Alpha']],
      ['title=FOTOGRAFIA%20%C3%87%C3%83O', ['beta 50%_off']],
      ['title=%C3%A9psilon', ['Épsilon']],
      ['title=epsilon', []], // accent-sensitive
      ['title=50%25_', ['beta 50%_off']], // % and _ are literal
      ['title=a%25', []],
      ['title=a&status=ACTIVE', ['beta 50%_off', 'Alpha']],
    ])('filters by %s', async (query, expected) => {
      const res = await list(`?${query}`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(expected);
      expect(res.headers['x-total-count']).toBe(String(expected.length));
    });

    it('evaluates the status at call time: a link reaching its expiration is EXPIRED', async () => {
      const link = await createLink(server, s.sellerId, { label: 'Soon', expiration: new Date(Date.now() + 1500).toISOString() });
      expect(link.status).toBe('ACTIVE');
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect((await get(`/payment-links/by-short-id/${link.short_id}`)).body.status).toBe('EXPIRED');
      expect(ids(await list('?status=EXPIRED&title=soon'))).toEqual(['Soon']);
      const stored = await server.store.query('SELECT status FROM payment_links WHERE link_id = $1', [link.link_id]);
      expect(stored.rows).toEqual([{ status: 'ACTIVE' }]); // evaluated, not rewritten
    });

    it.each([
      ['created_at_start=2026-02-01T00:00:00Z&created_at_end=2026-01-01T00:00:00Z', 'created_at_start must be before created_at_end'],
      ['created_at_start=2026-01-01T00:00:00Z&created_at_end=2026-01-01T00:00:00Z', 'created_at_start must be before created_at_end'],
      ['expiration_start=2026-02-01T00:00:00Z&expiration_end=2026-01-01T00:00:00Z', 'expiration_start must be before expiration_end'],
    ])('answers 422 invalid_date_range for %s', async (query, message) => {
      const res = await list(`?${query}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error_code: 'invalid_date_range', message, status_code: 422 });
    });

    it.each([
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      ['limit=ten', 'query.limit'],
      ['page=0', 'query.page'],
      ['sort=price', 'query.sort'],
      ['sort_type=DESC', 'query.sort_type'],
      ['status=active', 'query.status'],
      ['payment_type=pix', 'query.payment_type'],
      ['created_at_start=2026-01-01', 'query.created_at_start'],
      ['expiration_end=yesterday', 'query.expiration_end'],
      [`title=${'x'.repeat(101)}`, 'query.title'],
      ['title=', 'query.title'],
    ])('answers 400 invalid_request for %s', async (query, path) => {
      const res = await list(`?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
      expectNoStackTrace(res.body);
    });

    it.each(['limit=0x1', 'limit=1e1', 'limit=%2B5', 'limit=%207', 'limit=2.0', 'page=0b1', 'limit=5&limit=1e1'])(
      'answers 400 to an integer not in decimal digits (%s), which the validator alone read as a number',
      async (query) => {
        const res = await list(`?${query}`);
        expect(res.status).toBe(400);
        const name = query.startsWith('page') ? 'page' : 'limit';
        expect(res.body).toEqual({
          error_code: 'invalid_request',
          message: 'Invalid request',
          status_code: 400,
          details: [{ path: `query.${name}`, message: `${name} must be an integer written in decimal digits` }],
        });
      },
    );

    it('reads decimal digits as before (leading zeros included)', async () => {
      const res = await list('?limit=002&page=01');
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
    });

    it('answers 400 for an unknown query parameter', async () => {
      const res = await list('?color=red');
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('invalid_request');
    });

    it('answers 401 and 400 guid_error', () => expectProtected((t) => get('/payment-links', t)));
  });

  describe('GET /payment-links/by-short-id/{short_id}', () => {
    it('answers the link whatever its status, without a token', async () => {
      const link = await createLink(server, a.sellerId, { label: 'Public' });
      const res = await get(`/payment-links/by-short-id/${link.short_id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(link);
      await setLinkColumns(server.store, link.link_id, { status: 'INACTIVE' });
      expect((await get(`/payment-links/by-short-id/${link.short_id}`)).body.status).toBe('INACTIVE');
      await setLinkColumns(server.store, link.link_id, { status: 'EXPIRED' });
      expect((await get(`/payment-links/by-short-id/${link.short_id}`)).body.status).toBe('EXPIRED');
    });

    it('matches exactly (case-sensitive); anything else is 404, never 400', async () => {
      const link = await createLink(server, a.sellerId);
      const swapped = [...link.short_id].map((c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
      for (const id of [swapped, 'nope', '%27%3B--', 'x'.repeat(32)]) {
        if (id === link.short_id) continue;
        const res = await get(`/payment-links/by-short-id/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      // Beyond the contract's 32 characters the schema refuses it: still the lookup's 404, never a 400.
      const long = await get(`/payment-links/by-short-id/${'x'.repeat(300)}`);
      expect(long.status).toBe(404);
      expect(long.body).toEqual(NOT_FOUND);
      // A path of the area the contract does not describe is the area's plain 404.
      const elsewhere = await get(`/payment-links/by-short-ids/${link.short_id}`);
      expect([elsewhere.status, elsewhere.body]).toEqual([404, { error_code: 'not_found', message: 'Not found', status_code: 404 }]);
      // HEAD gets the GET's answer, its error too: the same status and length (the lookup's 404, not the plain one).
      for (const id of ['nope', 'x'.repeat(300), link.short_id]) {
        const [viaGet, viaHead] = await Promise.all(['GET', 'HEAD'].map((method) => fetch(`${server.url}${BASE}/payment-links/by-short-id/${id}`, { method })));
        expect([viaHead!.status, viaHead!.headers.get('content-length')], id).toEqual([viaGet!.status, viaGet!.headers.get('content-length')]);
        expect(await viaHead!.text()).toBe('');
        await viaGet!.arrayBuffer();
      }
    });
  });

  describe('GET /payment-links/{link_id}/orders/{order_id} and the orders', () => {
    it('answers an order created through createOrder, with its history', async () => {
      const link = await createLink(server, a.sellerId, {
        request_delivery_address: true,
        shipping_amount: 2500,
        products: [product({ amount: 34990, order_prefix: 'FOTO' }), product({ amount: 1000, quantity: 2 })],
      });
      const at = new Date('2026-04-18T19:41:58Z');
      const order = await server.store.transaction((tx) =>
        createOrder(tx, {
          sellerId: a.sellerId,
          linkId: link.link_id,
          customer,
          shipping: { name: 'Mariana Souza', address: { city: 'São Paulo', country: 'BR' } },
          checkoutId: 'a1ac4ca5-4b62-45f4-84b3-297193e5b4e3',
          description: 'Payment submitted by credit card',
          at,
        }),
      );
      const res = await get(`/payment-links/${link.link_id}/orders/${order.orderId}`, a.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        order_id: order.orderId,
        link_id: link.link_id,
        currency: 'BRL',
        amount: 34990 + 2000 + 2500,
        reference_code: 'FOTO-000001',
        checkout_id: 'a1ac4ca5-4b62-45f4-84b3-297193e5b4e3',
        customer,
        shipping: { name: 'Mariana Souza', shipping_amount: 2500, address: { city: 'São Paulo', country: 'BR' } },
        status: 'pending',
        history: [{ status: 'pending', description: 'Payment submitted by credit card', created_at: '2026-04-18T19:41:58.000Z' }],
        created_at: '2026-04-18T19:41:58.000Z',
        updated_at: '2026-04-18T19:41:58.000Z',
      });

      const later = new Date('2026-04-18T19:42:03Z');
      await server.store.transaction((tx) => updateOrderStatus(tx, { sellerId: a.sellerId, linkId: link.link_id, orderId: order.orderId, status: 'approved', description: 'Authorized by the issuer', at: later }));
      const approved = (await get(`/payment-links/${link.link_id}/orders/${order.orderId}`, a.token)).body;
      expect(approved.status).toBe('approved');
      expect(approved.updated_at).toBe('2026-04-18T19:42:03.000Z');
      expect(approved.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'approved']);
      expect((await get(`/payment-links/by-short-id/${link.short_id}`)).body.successful_sales).toBe(1);
    });

    it('omits shipping when the link neither asks for delivery nor charges it', async () => {
      const link = await createLink(server, a.sellerId);
      const order = await server.store.transaction((tx) => createOrder(tx, { sellerId: a.sellerId, linkId: link.link_id, customer, shipping: { name: 'X' } }));
      const res = await get(`/payment-links/${link.link_id}/orders/${order.orderId}`, a.token);
      expect(res.body.shipping).toBeUndefined();
      expect(res.body.reference_code).toBe('ORDER-000001');
    });

    it('counts successful sales: a unique link EXPIRES after its sale, a refund does not decrement, a final order does not move', async () => {
      const link = await createLink(server, a.sellerId, { type: 'unique' });
      const order = await server.store.transaction((tx) => createOrder(tx, { sellerId: a.sellerId, linkId: link.link_id, customer }));
      const move = (status: 'paid' | 'refunded' | 'denied') => server.store.transaction((tx) => updateOrderStatus(tx, { sellerId: a.sellerId, linkId: link.link_id, orderId: order.orderId, status }));
      await move('paid');
      let now = (await get(`/payment-links/by-short-id/${link.short_id}`)).body;
      expect([now.status, now.successful_sales]).toEqual(['EXPIRED', 1]);
      await expect(server.store.transaction((tx) => createOrder(tx, { sellerId: a.sellerId, linkId: link.link_id, customer }))).rejects.toThrow('The payment link is EXPIRED and takes no payments');
      await move('refunded');
      now = (await get(`/payment-links/by-short-id/${link.short_id}`)).body;
      expect([now.status, now.successful_sales]).toEqual(['EXPIRED', 1]);
      await expect(move('denied')).rejects.toThrow('An order cannot move from refunded to denied');
      const history = (await get(`/payment-links/${link.link_id}/orders/${order.orderId}`, a.token)).body.history;
      expect(history.map((h: { status: string }) => h.status)).toEqual(['pending', 'paid', 'refunded']);
    });

    it('answers 404 payment_link_not_found for another seller’s link, order_not_found for an order of another link', async () => {
      const link = await createLink(server, a.sellerId);
      const otherLink = await createLink(server, a.sellerId);
      const order = await server.store.transaction((tx) => createOrder(tx, { sellerId: a.sellerId, linkId: link.link_id, customer }));
      const asB = await get(`/payment-links/${link.link_id}/orders/${order.orderId}`, b.token);
      expect(asB.status).toBe(404);
      expect(asB.body).toEqual(NOT_FOUND);
      await expect(server.store.transaction((tx) => createOrder(tx, { sellerId: b.sellerId, linkId: link.link_id, customer }))).rejects.toThrow('Payment Link not found');
      const unknownLink = await get(`/payment-links/${UNKNOWN_ID}/orders/${order.orderId}`, a.token);
      expect(unknownLink.body).toEqual(NOT_FOUND);
      const wrongLink = await get(`/payment-links/${otherLink.link_id}/orders/${order.orderId}`, a.token);
      expect(wrongLink.status).toBe(404);
      expect(wrongLink.body).toEqual({ error_code: 'order_not_found', message: 'Order not found', status_code: 404 });
    });

    it('answers 400 invalid_request for ids that are not UUID v4', async () => {
      for (const [path, where] of [
        [`/payment-links/not-a-uuid/orders/${UNKNOWN_ID}`, 'path.link_id'],
        [`/payment-links/${UNKNOWN_ID}/orders/3fa85f64-5717-1562-b3fc-2c963f66afa6`, 'path.order_id'],
      ] as const) {
        const res = await get(path, a.token);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
        expect(res.body.details.map((d: { path: string }) => d.path)).toEqual([where]);
      }
    });

    it('answers 401 and 400 guid_error', () => expectProtected((t) => get(`/payment-links/${UNKNOWN_ID}/orders/${UNKNOWN_ID}`, t)));
  });

  describe('POST /payment-links/products/images', () => {
    it.each([
      ['image/png', PNG],
      ['image/jpeg', JPEG],
      ['image/webp', WEBP],
    ])('stores a %s image for the token’s seller: its type, size and SHA-256, not its bytes', async (type, content) => {
      const res = await upload(server, a.token, content, type);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ image_id: expect.any(String), content_type: type, size_bytes: content.length, created_at: expect.any(String) });
      const stored = await server.store.query<Record<string, unknown>>('SELECT * FROM product_images WHERE image_id = $1', [res.body.image_id]);
      expect(stored.rows).toHaveLength(1);
      const { created_at: createdAt, ...row } = stored.rows[0]!;
      expect(row).toEqual({
        image_id: res.body.image_id,
        seller_id: a.sellerId,
        content_type: type,
        size_bytes: content.length,
        content_sha256: createHash('sha256').update(content).digest('hex'),
      });
      expect(new Date(createdAt as string).toISOString()).toBe(res.body.created_at);
    });

    it('accepts exactly 5 MiB and answers 413 image_too_large above', async () => {
      const image = (size: number) => Buffer.concat([PNG, Buffer.alloc(size - PNG.length)]);
      expect((await upload(server, a.token, image(5 * 1024 * 1024), 'image/png')).status).toBe(201);
      for (const size of [5 * 1024 * 1024 + 1, 8 * 1024 * 1024]) {
        const res = await upload(server, a.token, image(size), 'image/png');
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ error_code: 'image_too_large', message: 'The image must not exceed 5 MiB (5242880 bytes)', status_code: 413 });
      }
    });

    it('answers 415 for a GIF, a content that does not match its type, or a body that is not multipart', async () => {
      const gif = await upload(server, a.token, GIF, 'image/gif');
      expect(gif.status).toBe(415);
      expect(gif.body).toEqual({ error_code: 'unsupported_media_type', message: 'The image must be image/png, image/jpeg or image/webp', status_code: 415 });
      const mismatch = await upload(server, a.token, JPEG, 'image/png');
      expect(mismatch.status).toBe(415);
      expect(mismatch.body.error_code).toBe('unsupported_media_type');
      const json = await server.http.post(`${BASE}/payment-links/products/images`).set('Authorization', `Bearer ${a.token}`).send({ image: 'x' });
      expect(json.status).toBe(415);
      expect(json.body).toMatchObject({ error_code: 'unsupported_media_type', status_code: 415 });
    });

    it('answers 400 for a missing, empty or non-file image part', async () => {
      const missing = await upload(server, a.token, PNG, 'image/png', 'photo');
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      expect(missing.body.details.map((d: { path: string }) => d.path)).toEqual(['body.image']);
      const empty = await upload(server, a.token, Buffer.alloc(0), 'image/png');
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ error_code: 'invalid_request', message: 'The request body is invalid', status_code: 400, details: [{ message: 'image must not be empty', path: 'body.image' }] });
      const text = await server.http.post(`${BASE}/payment-links/products/images`).set('Authorization', `Bearer ${a.token}`).field('image', 'not a file');
      expect(text.status).toBe(400);
      expect(text.body.details).toEqual([{ message: 'image is required (a file part)', path: 'body.image' }]);
      expect((await server.store.query('SELECT 1 FROM product_images WHERE size_bytes = 0')).rowCount).toBe(0);
    });

    it('keeps the first image part and ignores the others; more than 16 text parts, or one over 64 KiB, answer 400', async () => {
      const images = `${BASE}/payment-links/products/images`;
      const send = () => server.http.post(images).set('Authorization', `Bearer ${a.token}`);
      const other = Buffer.concat([PNG, Buffer.alloc(64 * 1024)]);
      // Other file parts, a second image part among them, are read and not kept (memory: each would
      // have been held whole): the answer is the first image's.
      let req = send().attach('photo', other, { filename: 'a.png', contentType: 'image/png' }).attach('image', PNG, { filename: 'p.png', contentType: 'image/png' });
      for (let i = 0; i < 6; i++) req = req.attach('image', other, { filename: `b${i}.png`, contentType: 'image/png' });
      const kept = await req.field('note', 'ignored');
      expect(kept.status).toBe(201);
      expect(kept.body).toMatchObject({ content_type: 'image/png', size_bytes: PNG.length });
      expect((await server.store.query('SELECT size_bytes FROM product_images WHERE image_id = $1', [kept.body.image_id])).rows).toEqual([{ size_bytes: PNG.length }]);

      let fields = send().attach('image', PNG, { filename: 'p.png', contentType: 'image/png' });
      for (let i = 0; i < 17; i++) fields = fields.field(`f${i}`, 'x');
      const many = await fields;
      const long = await send().attach('image', PNG, { filename: 'p.png', contentType: 'image/png' }).field('note', 'x'.repeat(64 * 1024 + 1));
      for (const res of [many, long]) {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error_code: 'invalid_request', status_code: 400 });
      }
      const problem = (message: string) => ({ error_code: 'invalid_request', message, status_code: 400, details: [{ message, path: 'body' }] });
      expect(many.body).toEqual(problem('The multipart form has more than 16 text parts'));
      expect(long.body).toEqual(problem('A text part of the multipart form is over 64 KiB'));
    });

    it('refuses more than 8 file parts or 32 parts (400), and a body that says it holds more than the image and its text parts (413), reading none of it', async () => {
      const images = `${BASE}/payment-links/products/images`;
      const send = () => server.http.post(images).set('Authorization', `Bearer ${a.token}`);
      const problem = (message: string) => ({ error_code: 'invalid_request', message, status_code: 400, details: [{ message, path: 'body' }] });
      let files = send().attach('image', PNG, { filename: 'p.png', contentType: 'image/png' });
      for (let i = 0; i < 8; i++) files = files.attach('other', PNG, { filename: `o${i}.png`, contentType: 'image/png' });
      expect((await files).body).toEqual(problem('The multipart form has more than 8 file parts'));
      // Parts that are neither a file nor a text part (no Content-Disposition) count too.
      const boundary = 'b0undary';
      const raw = Buffer.concat([
        ...Array.from({ length: 33 }, () => Buffer.from(`--${boundary}\r\nx-nothing: 1\r\n\r\nskipped\r\n`)),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="p.png"\r\nContent-Type: image/png\r\n\r\n`),
        PNG,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const parts = await send().set('Content-Type', `multipart/form-data; boundary=${boundary}`).send(raw);
      expect(parts.body).toEqual(problem('The multipart form has more than 32 parts'));
      // 5 MiB of image, 16 text parts of 64 KiB and 64 KiB of part headers: a body over that is not read.
      const before = (await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0];
      const big = await send().attach('image', PNG, { filename: 'p.png', contentType: 'image/png' }).attach('other', Buffer.alloc(6.2 * 1024 * 1024), { filename: 'o.png', contentType: 'image/png' });
      expect(big.status).toBe(413);
      expect(big.body).toMatchObject({ error_code: 'image_too_large', status_code: 413 });
      expect((await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0]).toEqual(before);
    });

    it('refuses a body sent chunked, without a Content-Length (400), answering before its end', async () => {
      const before = (await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0];
      const boundary = 'chunk3d';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="p.png"\r\nContent-Type: image/png\r\n\r\n`;
      // The form's first chunk only: the body never ends, so an answer proves it was not read to its
      // end; and the sandbox closes the connection after it rather than read the rest and drop it.
      const unended = (headers: Record<string, string>, { method, path } = { method: 'POST', path: `${BASE}/payment-links/products/images` }) =>
        unendedRequest(`${server.url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${a.token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, ...headers },
          first: Buffer.concat([Buffer.from(head), PNG]),
        });
      const res = await unended({ 'Transfer-Encoding': 'chunked' });
      const message = 'A request body must be sent with its Content-Length (a chunked body is not read)';
      expect(res).toEqual({ status: 400, body: { error_code: 'invalid_request', message, status_code: 400, details: [{ message, path: 'body' }] }, connection: 'close', closedBySandbox: true });
      // Whatever its Content-Type says (the validator gives multer any body whose type holds the text multipart/form-data).
      const disguised = await unended({ 'Transfer-Encoding': 'chunked', 'Content-Type': `text/plain; note="multipart/form-data; boundary=${boundary}"` });
      expect(disguised).toEqual({ ...res, body: { ...(res.body as object) } });
      // A body that says it is larger than an upload may be: 413, the connection closed the same way.
      const large = await unended({ 'Content-Length': String(7 * 1024 * 1024) });
      expect(large).toMatchObject({ status: 413, body: { error_code: 'image_too_large', status_code: 413 }, connection: 'close', closedBySandbox: true });
      // Any answer given before the body arrived closes the same way: here the key set, which takes no body.
      const keySet = await unended({ 'Transfer-Encoding': 'chunked' }, { method: 'GET', path: '/sandbox/v1/jwks' });
      expect(keySet).toMatchObject({ status: 200, connection: 'close', closedBySandbox: true });
      expect((keySet.body as { keys: unknown[] }).keys).toHaveLength(1);
      expect((await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0]).toEqual(before);
      // The same form with its length is stored.
      const whole = await server.http.post(`${BASE}/payment-links/products/images`).set('Authorization', `Bearer ${a.token}`).set('Content-Type', `multipart/form-data; boundary=${boundary}`).send(Buffer.concat([Buffer.from(head), PNG, Buffer.from(`\r\n--${boundary}--\r\n`)]));
      expect(whole.status).toBe(201);
      expect(whole.body).toMatchObject({ content_type: 'image/png', size_bytes: PNG.length });
    });

    it('answers 401 and 400 guid_error, storing nothing', async () => {
      const before = (await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0];
      await expectProtected((t) => {
        const req = server.http.post(`${BASE}/payment-links/products/images`);
        if (t) req.set('Authorization', `Bearer ${t}`);
        return req.attach('image', PNG, { filename: 'p.png', contentType: 'image/png' });
      });
      expect((await server.store.query('SELECT count(*)::int AS n FROM product_images')).rows[0]).toEqual(before);
    });
  });
});
