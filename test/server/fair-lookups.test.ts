// Host name lookups shared fairly between sellers (server/http/fair-lookups.ts): one seller's names
// that never resolve hold one lookup at a time, so another seller's notification URL change goes
// through at once, even behind a resolver that, like libuv's pool, resolves two names at a time.
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fairLookups } from '../../server/http/fair-lookups.ts';
import type { HostResolver } from '../../server/http/public-addresses.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { insertSeller, tokenOf } from './support/sellers.ts';
import { MERCHANT_CREDENTIALS } from './support/checkout.ts';
import { PUBLIC_V4 } from './support/resolvers.ts';

/**
 * A resolver that, like getaddrinfo on libuv's pool, resolves two names at a time (the others wait
 * for a slot): names under `.silent.example` never answer until `release()`, any other is public.
 */
function twoSlotResolver() {
  const started: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const waitingForSlot: Array<() => void> = [];
  const silent: Array<() => void> = [];
  const resolve: HostResolver = async (hostname) => {
    if (inFlight >= 2) await new Promise<void>((go) => waitingForSlot.push(go));
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    started.push(hostname);
    try {
      if (hostname.endsWith('.silent.example')) await new Promise<void>((answer) => silent.push(answer));
      return [{ address: PUBLIC_V4, family: 4 }] as LookupAddress[];
    } finally {
      inFlight -= 1;
      waitingForSlot.shift()?.();
    }
  };
  return {
    resolve,
    started,
    get maxInFlight() {
      return maxInFlight;
    },
    release: () => silent.splice(0).forEach((answer) => answer()),
  };
}

describe('fairLookups', () => {
  it('runs one lookup of a seller at a time, while another seller\'s runs at once', async () => {
    const resolver = twoSlotResolver();
    const lookups = fairLookups(resolver.resolve, { timeoutMs: 60_000 });
    const attacker = ['a1', 'a2', 'a3', 'a4'].map((name) => lookups('seller-a')(`${name}.silent.example`));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(resolver.started).toEqual(['a1.silent.example']);
    expect(await lookups('seller-b')('merchant-b.example')).toEqual([{ address: PUBLIC_V4, family: 4 }]);
    resolver.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    resolver.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    resolver.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    resolver.release();
    expect(await Promise.all(attacker)).toHaveLength(4);
    expect(resolver.started).toEqual(['a1.silent.example', 'merchant-b.example', 'a2.silent.example', 'a3.silent.example', 'a4.silent.example']);
    expect(resolver.maxInFlight).toBe(2);
  });

  it('gives up waiting after its timeout (ETIMEOUT), and a lookup whose caller left before its turn never runs', async () => {
    const resolver = twoSlotResolver();
    const lookups = fairLookups(resolver.resolve, { timeoutMs: 50 });
    const first = lookups('seller-a')('first.silent.example').catch((error: NodeJS.ErrnoException) => error);
    const second = lookups('seller-a')('second.silent.example').catch((error: NodeJS.ErrnoException) => error);
    expect(await first).toMatchObject({ code: 'ETIMEOUT', message: 'first.silent.example did not resolve within 50 ms' });
    expect(await second).toMatchObject({ code: 'ETIMEOUT', message: 'second.silent.example did not resolve within 50 ms' });
    resolver.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(resolver.started).toEqual(['first.silent.example']);
  });

  it('gives the seller its turn back after maxTurnMs when a lookup never ends', async () => {
    const hanging: HostResolver = () => new Promise(() => {});
    const lookups = fairLookups(hanging, { timeoutMs: 50, maxWaiting: 2, maxTurnMs: 150 });
    const stuck = [1, 2].map((n) => lookups('seller-a')(`stuck-${n}.example`).catch((error: NodeJS.ErrnoException) => error.code));
    expect(await Promise.all(stuck)).toEqual(['ETIMEOUT', 'ETIMEOUT']);
    await expect(lookups('seller-a')('third.example')).rejects.toMatchObject({ code: 'EBUSY' });
    await new Promise((resolve) => setTimeout(resolve, 400)); // both turns over
    await expect(lookups('seller-a')('fourth.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('refuses at once (EBUSY) a lookup of a seller that already has maxWaiting under way', async () => {
    const resolver = twoSlotResolver();
    const lookups = fairLookups(resolver.resolve, { timeoutMs: 60_000, maxWaiting: 3 });
    const queued = [1, 2, 3].map((n) => lookups('seller-a')(`q${n}.silent.example`));
    await expect(lookups('seller-a')('q4.silent.example')).rejects.toMatchObject({ code: 'EBUSY' });
    await expect(lookups('seller-b')('other.example')).resolves.toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      resolver.release();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await expect(Promise.all(queued)).resolves.toHaveLength(3);
  });
});

describe('notification URL changes of two sellers on one server', () => {
  const resolver = twoSlotResolver();
  let server: TestServer;
  const tokens: Record<'attacker' | 'merchant', string> = { attacker: '', merchant: '' };
  beforeAll(async () => {
    server = await startTestServer({ config: { allowPrivateNotificationUrls: false }, resolveHostName: resolver.resolve });
    for (const who of ['attacker', 'merchant'] as const) tokens[who] = await tokenOf(server, await insertSeller(server.store));
  });
  afterAll(async () => {
    resolver.release();
    await server?.close();
  });

  const patch = (who: 'attacker' | 'merchant', url: string) =>
    server.http
      .patch('/dpy/web-checkout/v1/technical-configurations')
      .set('Authorization', `Bearer ${tokens[who]}`)
      .send({ notification: { url, user_credentials: MERCHANT_CREDENTIALS } });

  it("answers a merchant's change at once while another seller's names stall every lookup they can", async () => {
    const attacks = Array.from({ length: 8 }, (_, i) => patch('attacker', `https://a${i}.silent.example/hook`).then((res) => res));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    const merchant = await patch('merchant', 'https://merchant-b.example/hook');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(merchant.status).toBe(200);
    expect(merchant.body.notification).toMatchObject({ url: 'https://merchant-b.example/hook' });
    expect(resolver.started.filter((name) => name.endsWith('.silent.example'))).toHaveLength(1);
    for (let i = 0; i < 8; i++) {
      resolver.release();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await Promise.all(attacks)).map((res) => res.status)).toEqual(Array(8).fill(200));
  });
});
