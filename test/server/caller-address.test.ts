// The caller's address in one spelling (server/http/caller-address.ts): what the limits
// count and what the hosted page records as the payer's device address, whatever the connection or
// a trusted proxy's X-Forwarded-For wrote (an attacker review delivered an 8 KB zone id, and
// `::ffff:1.2.3.4` beside `1.2.3.4`, in merchant notifications).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCheckoutNotification } from '../../client/webhooks/verify.ts';
import { canonicalIp } from '../../server/http/caller-address.ts';
import { notificationRepository } from '../../server/notifications/repository.ts';
import { APPROVED, cardForm, configureCheckout, createIntent } from './support/checkout.ts';
import { createSeller, type SandboxSeller } from './support/payment-link.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('canonicalIp', () => {
  it('writes each address one way, IPv4-mapped IPv6 as IPv4, without a zone id, and refuses what is no address', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      ['203.0.113.7', '203.0.113.7'],
      ['2001:0DB8:0000::0001', '2001:db8::1'],
      ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['::FFFF:CB00:7107', '203.0.113.7'],
      ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
      ['::1', '::1'],
      ['fe80::1%eth0', 'fe80::1'],
      [`2001:db8::1%${'a'.repeat(8000)}`, '2001:db8::1'],
      ['203.0.113.7%eth0', undefined],
      ['unknown', undefined],
      ['203.0.113.7:443', undefined],
      ['[2001:db8::1]', undefined],
      ['01.2.3.4', undefined],
      [undefined, undefined],
    ];
    expect(cases.map(([given]) => canonicalIp(given))).toEqual(cases.map(([, expected]) => expected));
  });
});

describe('the payer address a hosted page records behind a trusted proxy', () => {
  let server: TestServer;
  let seller: SandboxSeller;
  beforeAll(async () => {
    server = await startTestServer({ config: { trustProxy: ['127.0.0.1'] } });
    seller = await createSeller(server, { trade_name: 'Loja do Proxy' });
    await configureCheckout(server, seller.token, { url: 'http://127.0.0.1:9' });
  });
  afterAll(() => server?.close());

  /** The device address of the notification of an intent paid through the proxy, which forwarded `forwardedFor`. */
  async function recordedFor(forwardedFor: string): Promise<string | undefined> {
    const intent = await createIntent(server, seller.token);
    const id = intent.payment_intent_id;
    const paid = await server.http.post(`/checkout/${id}/pay`).set('X-Forwarded-For', forwardedFor).type('form').send(cardForm(APPROVED));
    expect(paid.status).toBe(303);
    const delivery = (await notificationRepository(server.store).listForSeller(seller.sellerId)).find((d: any) => d.payload.payment_intent_id === id);
    return validateCheckoutNotification(delivery!.payload).frontend?.ip;
  }

  it('records the forwarded address in one spelling, without its zone id, and the proxy\'s own for what is no address', async () => {
    expect(await recordedFor('198.51.100.23')).toBe('198.51.100.23');
    expect(await recordedFor('::ffff:198.51.100.23')).toBe('198.51.100.23');
    expect(await recordedFor('2001:0DB8:0000::0001')).toBe('2001:db8::1');
    expect(await recordedFor(`2001:db8::1%${'a'.repeat(4000)}`)).toBe('2001:db8::1');
    expect(await recordedFor('unknown')).toBe('127.0.0.1');
  });
});
