// Unknown members of a request body are accepted and not kept (server/http/contract-members.ts): a
// payment intent's customer, addresses and products reach the store, and the notification, with the
// contract's members only; an object the contract marks open keeps what it was sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractMembers } from '../../server/http/contract-members.ts';
import type { PlatformDocument } from '../../server/http/contract.ts';
import { notificationDeliveryWorker } from '../../server/notifications/delivery-worker.ts';
import { createLogger } from '../../server/http/logging.ts';
import { ADMIN, startPlatformServer, type TestServer } from './support/server.ts';
import { createSeller, type SandboxSeller } from './support/payment-link.ts';
import { cardForm, configureCheckout, createIntent, startMerchant, type Merchant } from './support/checkout.ts';

describe('contractMembers', () => {
  const document = {
    paths: {},
    components: {
      schemas: {
        Named: { type: 'object', properties: { a: { type: 'string' }, inner: { $ref: '#/components/schemas/Inner' } } },
        Inner: { type: 'object', properties: { x: { type: 'integer' } } },
        Open: { type: 'object', additionalProperties: true, properties: { known: { $ref: '#/components/schemas/Inner' } } },
        Both: { allOf: [{ $ref: '#/components/schemas/Named' }, { type: 'object', properties: { b: { type: 'string' } } }] },
        Either: { oneOf: [{ properties: { c: { type: 'string' } } }, { properties: { d: { type: 'string' } } }] },
        List: { type: 'array', items: { $ref: '#/components/schemas/Inner' } },
        Free: { type: 'object' },
      },
    },
  } as unknown as PlatformDocument;
  const keep = contractMembers(document);
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

  it('keeps the members every branch of an allOf names (where Ajv\'s removeAdditional would drop the other branch\'s), at every depth', () => {
    expect(keep(ref('Both'), { a: '1', b: '2', z: 3, inner: { x: 1, y: 2 } })).toEqual({ a: '1', b: '2', inner: { x: 1 } });
    expect(keep(ref('Either'), { c: '1', d: '2', e: '3' })).toEqual({ c: '1', d: '2' });
    expect(keep(ref('List'), [{ x: 1, y: 2 }, { y: 3 }])).toEqual([{ x: 1 }, {}]);
  });

  it('keeps the members of an open object and of one the contract does not describe member by member, and scalars as they are', () => {
    expect(keep(ref('Open'), { known: { x: 1, y: 2 }, other: { any: true } })).toEqual({ known: { x: 1 }, other: { any: true } });
    expect(keep(ref('Free'), { any: 1 })).toEqual({ any: 1 });
    expect(keep(ref('Named'), 'text')).toBe('text');
  });

  it('drops a __proto__ member without touching any prototype', () => {
    const body = JSON.parse('{"a":"1","__proto__":{"polluted":true}}');
    const kept = keep(ref('Named'), body) as Record<string, unknown>;
    expect(kept).toEqual({ a: '1' });
    expect(Object.keys(kept)).toEqual(['a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // An open object keeps it as sent: its own member, not its prototype.
    const open = keep(ref('Open'), JSON.parse('{"__proto__":{"polluted":true},"x":1}')) as Record<string, unknown>;
    expect(Object.keys(open)).toEqual(['__proto__', 'x']);
    expect(Object.getPrototypeOf(open)).toBe(Object.prototype);
    expect(JSON.stringify(open)).toBe('{"__proto__":{"polluted":true},"x":1}');
  });
});

describe('a payment intent with members the contract does not name', () => {
  let server: TestServer;
  let seller: SandboxSeller;
  let merchant: Merchant;
  beforeAll(async () => {
    server = await startPlatformServer('pglite');
    merchant = await startMerchant();
    seller = await createSeller(server);
    await configureCheckout(server, seller.token, merchant);
  });
  afterAll(async () => {
    await merchant?.close();
    await server?.close();
  });

  it('is accepted, and its notification carries the contract\'s members only, at every depth', async () => {
    const planted = 'A'.repeat(10_000);
    const intent = await createIntent(server, seller.token, (body) => {
      body.planted = planted;
      body.customer.planted = planted;
      body.customer.billing_address.planted = planted;
      Object.defineProperty(body.customer, '__proto__', { value: { polluted: true }, enumerable: true });
      body.shipping.planted = planted;
      body.shipping.address.planted = planted;
      body.product[0].planted = planted;
      body.configurations.planted = planted;
    });
    const paid = await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm());
    expect(paid.status).toBe(303);
    const worker = notificationDeliveryWorker({ store: server.store, logger: createLogger('silent'), config: { ...server.config, notificationPollIntervalMs: 10 } });
    worker.start();
    try {
      const end = Date.now() + 10_000;
      while (!merchant.notifications.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await worker.stop();
    }
    const [notification] = merchant.notifications;
    expect(notification!.body).not.toContain('planted');
    expect(notification!.body).not.toContain('__proto__');
    const payload = JSON.parse(notification!.body);
    // What was sent, without what was planted: the contract's members, every one of them kept.
    const sent = JSON.parse(JSON.stringify(intent.request), (key, value) => (key === 'planted' || key === '__proto__' ? undefined : value));
    expect(Object.keys(payload.customer).sort()).toEqual(Object.keys(sent.customer).sort());
    expect(payload.customer).toEqual(sent.customer);
    expect(payload.shipping.address).toEqual(sent.shipping.address);
    expect(payload.product).toEqual([expect.objectContaining({ title: sent.product[0].title, value: sent.product[0].value })]);
    const logged = await server.http.get(`/sandbox/v1/notifications?seller_id=${seller.sellerId}`).set('Authorization', ADMIN);
    expect(JSON.stringify(logged.body)).not.toContain('planted');
  });
});
