// Brute force on the token endpoints: failed attempts throttled per client id and address (429 with Retry-After
// in each form's shape, the correct secret refused too while throttled, other clients untouched, a
// new window after the old one), and scrypt bounded so that a flood cannot take every thread.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { failedAttempts } from '../../server/authentication/failed-attempts.ts';
import { FROM_ANOTHER_SITE } from '../../server/authentication/routes.ts';
import { HashingBusy, hashingSlots } from '../../server/authentication/hashing-slots.ts';
import type { AuthenticationRepository } from '../../server/authentication/repository.ts';
import type { AccessTokens } from '../../server/authentication/access-tokens.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { hashClientSecret, hashCostOf, verifyClientSecret } from '../../server/authentication/secrets.ts';
import { authenticationService } from '../../server/authentication/service.ts';
import { MAX_TRUSTED_PER_CLIENT, TRUSTED_ADDRESS_MS, trustedAddresses } from '../../server/authentication/trusted-addresses.ts';
import { ApiError } from '../../server/http/errors.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { basic, DEMO, startTestServer, tokenForm, type TestServer } from './support/server.ts';

vi.mock('../../server/authentication/secrets.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/authentication/secrets.ts')>();
  return { ...actual, verifyClientSecret: vi.fn(actual.verifyClientSecret) };
});
const scryptCalls = vi.mocked(verifyClientSecret);

const FIRST_FORM = '/authentication/oauth2/-core/access_token';
const SECOND_FORM = '/authentication/oauth2/access_token';
const LIMIT = 3;
// Long enough for LIMIT wrong secrets (one scrypt each, ~0.1 s alone, much more on a loaded machine)
// to fall inside one window: at 1.5 s a loaded run saw the window end before the next attempt.
const WINDOW_MS = 4000;
const THROTTLED = 'Too many failed attempts for this client, retry after the time in Retry-After';

describe('failed attempts on the token endpoints', () => {
  let sandbox: TestServer;
  beforeAll(async () => {
    sandbox = await startTestServer({ config: { tokenFailedAttempts: { limit: LIMIT, windowMs: WINDOW_MS } } });
  });
  afterAll(() => sandbox.close());

  const firstForm = (clientId: string, clientSecret: string) =>
    sandbox.http.post(FIRST_FORM).type('form').send(tokenForm({ client_id: clientId, client_secret: clientSecret }));
  const secondForm = (clientId: string, clientSecret: string) =>
    sandbox.http.post(SECOND_FORM).type('form').set('Authorization', basic(clientId, clientSecret)).send({ grant_type: 'client_credentials' });

  async function newClient(clientId: string, clientSecret = `${clientId}-secret`) {
    await authenticationRepository(sandbox.store).insertApiClient({ clientId, sellerId: DEMO_SELLER_ID, secretHash: await hashClientSecret(clientSecret, hashCostOf(sandbox.store)) });
    return { clientId, clientSecret };
  }

  async function failTimes(send: (id: string, secret: string) => Promise<{ status: number }>, clientId: string, times = LIMIT) {
    for (let i = 0; i < times; i++) expect((await send(clientId, `wrong-${i}`)).status).toBe(401);
  }

  const retryAfter = (res: { headers: Record<string, string> }) => Number(res.headers['retry-after']);

  /** The first form sent from another loopback address of this machine (127.0.0.0/8). */
  const firstFormFrom = (localAddress: string, clientId: string, secret: string, server: TestServer = sandbox, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = new URLSearchParams(tokenForm({ client_id: clientId, client_secret: secret })).toString();
      const req = httpRequest(`${server.url}${FIRST_FORM}`, { method: 'POST', localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('answers the first form 429 in its shape with Retry-After after the limit, the correct secret too', async () => {
    const { clientId, clientSecret } = await newClient('throttle-first-form');
    await failTimes(firstForm, clientId);
    for (const secret of ['wrong-again', clientSecret]) {
      const res = await firstForm(clientId, secret);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error_code: 'too_many_requests', message: THROTTLED, status_code: 429 });
      expect(retryAfter(res)).toBeGreaterThanOrEqual(1);
      expect(retryAfter(res)).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
    }
  });

  it('answers the second form 429 in its shape with Retry-After after the limit, the correct secret too', async () => {
    const { clientId, clientSecret } = await newClient('throttle-second-form');
    await failTimes(secondForm, clientId);
    const res = await secondForm(clientId, clientSecret);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'too_many_requests', error_description: THROTTLED });
    expect(retryAfter(res)).toBeGreaterThanOrEqual(1);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it("checks an unknown client id against a hash of the store's cost, as a known client's wrong secret: one scrypt of the same cost each", async () => {
    const known = await newClient('cost-known');
    scryptCalls.mockClear();
    expect((await firstForm('cost-nobody', 'x')).status).toBe(401);
    expect((await firstForm(known.clientId, 'wrong')).status).toBe(401);
    const costs = scryptCalls.mock.calls.map(([, stored]) => /^\$scrypt\$(ln=\d+,r=\d+,p=\d+)\$/.exec(stored)?.[1]);
    expect(costs).toEqual(['ln=10,r=8,p=1', 'ln=10,r=8,p=1']); // the sandbox is in memory
  });

  it('counts per client id, across both forms, known and unknown ids alike', async () => {
    const { clientId } = await newClient('throttle-both-forms');
    await failTimes(firstForm, clientId, LIMIT - 1);
    await failTimes(secondForm, clientId, 1);
    expect((await firstForm(clientId, 'x')).status).toBe(429);
    // Another client is not affected: its correct secret works and a wrong one is a plain 401.
    expect((await firstForm(DEMO.clientId, DEMO.clientSecret)).status).toBe(200);
    expect((await secondForm(DEMO.clientId, 'wrong')).body).toEqual({ error: 'invalid_client', error_description: 'Invalid client credentials' });
    // An unknown client id is throttled the same way: the answer does not tell whether it exists.
    await failTimes(firstForm, 'nobody-at-all');
    const unknown = await firstForm('nobody-at-all', 'x');
    expect(unknown.status).toBe(429);
    expect(unknown.body.message).toBe(THROTTLED);
  });

  it('counts per caller address too: wrong secrets from another address do not lock the client out here', async () => {
    const { clientId, clientSecret } = await newClient('throttle-other-address');
    // The attacker's address: 127.0.0.2, another loopback address of this machine.
    const fromAttacker = (secret: string) => firstFormFrom('127.0.0.2', clientId, secret);
    for (let i = 0; i < LIMIT; i++) expect((await fromAttacker(`guess-${i}`)).status).toBe(401);
    const attacker = await fromAttacker(clientSecret);
    expect(attacker.status).toBe(429);
    expect(JSON.parse(attacker.body).message).toBe(THROTTLED);
    // The client's own address (127.0.0.1) still gets its token.
    const own = await firstForm(clientId, clientSecret);
    expect(own.status).toBe(200);
    expect(own.body.token_type).toBe('Bearer');
  });

  it('counts the caller named by X-Forwarded-For only when a trusted proxy (TRUST_PROXY) sent it', async () => {
    const behindProxy = await startTestServer({ config: { tokenFailedAttempts: { limit: LIMIT, windowMs: 60_000 }, trustProxy: ['127.0.0.1'] } });
    try {
      const clientId = DEMO.clientId;
      const via = (from: string, forwardedFor: string, secret: string, server = behindProxy) => firstFormFrom(from, clientId, secret, server, { 'x-forwarded-for': forwardedFor });
      // Through the proxy (127.0.0.1): the attacker's forwarded address is throttled, the owner's is not.
      for (let i = 0; i < LIMIT; i++) expect((await via('127.0.0.1', '203.0.113.7', `guess-${i}`)).status).toBe(401);
      expect((await via('127.0.0.1', '203.0.113.7', DEMO.clientSecret)).status).toBe(429);
      expect((await via('127.0.0.1', '198.51.100.9', DEMO.clientSecret)).status).toBe(200);
      // The request log names the address counted beside the connection's (the proxy's).
      const logged = behindProxy.logs.lines.filter((l) => l.res?.statusCode === 429).map((l) => [l.req.remoteAddress, l.req.callerAddress]);
      expect(logged).toEqual([['127.0.0.1', '203.0.113.7']]);
      // What the proxy forwards is counted only when it is an address: else the proxy's own address counts
      // (`unknown`, `ip:port` or a long text would each be a new key, of any length).
      for (const junk of ['unknown', '192.0.2.1:5678', 'z'.repeat(10_000)]) {
        expect((await via('127.0.0.1', junk, `junk-${junk.length}`)).status).toBe(401);
      }
      expect((await via('127.0.0.1', 'unknown-2', DEMO.clientSecret)).status).toBe(429); // three failures at 127.0.0.1
      // Not through the proxy: a caller's own X-Forwarded-For is not believed, its address counts.
      for (let i = 0; i < LIMIT; i++) expect((await via('127.0.0.3', `198.51.100.${i + 20}`, `spoof-${i}`)).status).toBe(401);
      expect((await via('127.0.0.3', '198.51.100.99', DEMO.clientSecret)).status).toBe(429);
      const spoofed = behindProxy.logs.lines.at(-1)?.req;
      expect([spoofed?.remoteAddress, spoofed?.headers['x-forwarded-for'], spoofed?.callerAddress]).toEqual(['127.0.0.3', '198.51.100.99', undefined]);
    } finally {
      await behindProxy.close();
    }
    // Without TRUST_PROXY, every X-Forwarded-For is ignored: one address, one count.
    const direct = await startTestServer({ config: { tokenFailedAttempts: { limit: LIMIT, windowMs: 60_000 } } });
    try {
      for (let i = 0; i < LIMIT; i++) expect((await firstFormFrom('127.0.0.1', DEMO.clientId, `guess-${i}`, direct, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(401);
      expect((await firstFormFrom('127.0.0.1', DEMO.clientId, DEMO.clientSecret, direct, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(429);
    } finally {
      await direct.close();
    }
  });

  it('bounds the guesses for one client id from many addresses together at ten times the limit, sparing an address that got a token lately', async () => {
    // A server of its own with a window of a minute: 30 scrypt checks outlast WINDOW_MS on a loaded machine.
    const minute = await startTestServer({ config: { tokenFailedAttempts: { limit: LIMIT, windowMs: 60_000 } } });
    try {
      const clientId = DEMO.clientId;
      // The owner got a token from 127.0.0.13 before the guesses began.
      expect((await firstFormFrom('127.0.0.13', clientId, DEMO.clientSecret, minute)).status).toBe(200);
      for (let host = 2; host < 12; host++) {
        for (let i = 0; i < LIMIT; i++) expect((await firstFormFrom(`127.0.0.${host}`, clientId, `guess-${host}-${i}`, minute)).status).toBe(401);
      }
      // 10 addresses × LIMIT wrong secrets: the ceiling of the client id, whatever the next address.
      const fresh = await firstFormFrom('127.0.0.12', clientId, DEMO.clientSecret, minute);
      expect(fresh.status).toBe(429);
      expect(JSON.parse(fresh.body).message).toBe(THROTTLED);
      // The owner's address is spared by the ceiling: it got a token for this client id lately.
      const owner = await firstFormFrom('127.0.0.13', clientId, DEMO.clientSecret, minute);
      expect(owner.status).toBe(200);
      expect(JSON.parse(owner.body).token_type).toBe('Bearer');
      // Its own wrong secrets still count: the limit from its address throttles it as any other.
      for (let i = 0; i < LIMIT; i++) expect((await firstFormFrom('127.0.0.13', clientId, `owner-typo-${i}`, minute)).status).toBe(401);
      expect((await firstFormFrom('127.0.0.13', clientId, DEMO.clientSecret, minute)).status).toBe(429);
    } finally {
      await minute.close();
    }
  });

  it('refuses a token request a browser sent from a page of another site before reading it: no attempt counted, nothing hashed, the owner still served', async () => {
    const { clientId, clientSecret } = await newClient('other-site-victim');
    const hashed = scryptCalls.mock.calls.length;
    const pages = [
      { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://rebind.attacker.example' },
      { 'Sec-Fetch-Site': 'same-site', Origin: 'http://localhost:3000' }, // another port of this machine
      { 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'https://rebind.attacker.example' }, // a browser without Fetch Metadata
      { Origin: 'null' }, // a page with its own no-referrer, or a sandboxed frame
    ];
    for (let i = 0; i < LIMIT + 1; i++) {
      for (const headers of pages) {
        const first = await sandbox.http.post(FIRST_FORM).type('form').set(headers).send(tokenForm({ client_id: clientId, client_secret: `wrong-${i}` }));
        expect({ status: first.status, body: first.body }).toEqual({ status: 400, body: { error_code: 'invalid_request', message: FROM_ANOTHER_SITE, status_code: 400 } });
        const second = await sandbox.http.post(SECOND_FORM).type('form').set(headers).set('Authorization', basic(clientId, `wrong-${i}`)).send({ grant_type: 'client_credentials' });
        expect({ status: second.status, body: second.body }).toEqual({ status: 400, body: { error: 'invalid_request', error_description: FROM_ANOTHER_SITE } });
      }
    }
    expect(scryptCalls.mock.calls.length).toBe(hashed);
    // The owner, from the same address, with its secret, in both forms; and a page of the sandbox's own origin.
    expect((await firstForm(clientId, clientSecret)).status).toBe(200);
    expect((await secondForm(clientId, clientSecret)).status).toBe(200);
    const own = await sandbox.http.post(FIRST_FORM).type('form').set({ 'Sec-Fetch-Site': 'same-origin', Origin: sandbox.url }).send(tokenForm({ client_id: clientId, client_secret: clientSecret }));
    expect(own.status).toBe(200);
    expect(own.body.token_type).toBe('Bearer');
  });

  it('lets a client in again once its window is over', async () => {
    const { clientId, clientSecret } = await newClient('throttle-window');
    await failTimes(firstForm, clientId);
    expect((await firstForm(clientId, clientSecret)).status).toBe(429);
    // The window's end, without waiting for it: the throttle reads its time from Date.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime(Date.now() + WINDOW_MS + 50);
    const res = await firstForm(clientId, clientSecret);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    // A new window: the limit counts again from zero.
    await failTimes(firstForm, clientId);
    expect((await firstForm(clientId, clientSecret)).status).toBe(429);
  });

  it('clears the count on a success before the limit', async () => {
    const { clientId, clientSecret } = await newClient('throttle-success');
    await failTimes(firstForm, clientId, LIMIT - 1);
    expect((await firstForm(clientId, clientSecret)).status).toBe(200);
    await failTimes(firstForm, clientId, LIMIT - 1);
    expect((await secondForm(clientId, clientSecret)).status).toBe(200);
  });
});

describe('failedAttempts', () => {
  it('keeps at most maxClients client ids, the oldest windows going first', () => {
    const attempts = failedAttempts({ limit: 1, windowMs: 60_000 }, 3);
    for (const id of ['a', 'b', 'c', 'd']) attempts.recordFailure(id);
    expect(attempts.size).toBe(3);
    expect(() => attempts.assertAllowed('a')).not.toThrow(); // evicted
    expect(() => attempts.assertAllowed('d')).toThrow(ApiError);
  });

  it('is off with a limit of 0', () => {
    const attempts = failedAttempts({ limit: 0, windowMs: 60_000 });
    for (let i = 0; i < 100; i++) attempts.recordFailure('a');
    expect(() => attempts.assertAllowed('a')).not.toThrow();
    expect(attempts.size).toBe(0);
  });
});

describe('hashingSlots', () => {
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { opened, open };
  };

  it('runs at most `concurrency` at once, hands slots on in order, and refuses past the line', async () => {
    const slots = hashingSlots({ concurrency: 2, maxWaiting: 1 });
    const g = gate();
    const order: string[] = [];
    const work = (name: string) => slots.run(async () => (order.push(name), g.opened));
    const running = [work('a'), work('b'), work('c')];
    expect([slots.running, slots.waiting]).toEqual([2, 1]);
    await expect(slots.run(async () => 'd')).rejects.toBeInstanceOf(HashingBusy);
    g.open();
    await Promise.all(running);
    expect(order).toEqual(['a', 'b', 'c']);
    expect([slots.running, slots.waiting]).toEqual([0, 0]);
  });

  it('lets addresses take turns: a call from another address runs before the rest of a flood', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 100 });
    const g = gate();
    const order: string[] = [];
    const work = (name: string, address: string) => slots.run(async () => (order.push(name), g.opened), address);
    const calls = [work('a1', 'A'), work('a2', 'A'), work('a3', 'A'), work('b1', 'B'), work('a4', 'A'), work('c1', 'C')];
    expect([slots.running, slots.waiting]).toEqual([1, 5]);
    g.open();
    await Promise.all(calls);
    expect(order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
  });

  it('refuses an address past its own line, and gives the place of the longest line, or of an address that had hashes lately, to an address with fewer', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 4, maxWaitingPerAddress: 3 });
    const g = gate();
    const order: string[] = [];
    const work = (name: string, address: string) => slots.run(async () => (order.push(name), g.opened), address).then(() => name, (e: unknown) => e);
    const calls = [work('a0', 'A'), work('a1', 'A'), work('a2', 'A'), work('a3', 'A')];
    // A's own line is full (3 waiting): its next call is refused at once.
    expect(await work('a4', 'A')).toBeInstanceOf(HashingBusy);
    calls.push(work('b1', 'B')); // the line has room: 4 waiting now
    // The whole line is full: C, with none waiting, takes the place of A's newest call.
    calls.push(work('c1', 'C'));
    expect(await calls[3]).toBeInstanceOf(HashingBusy);
    // No line is two longer than B's now, but A had a hash this minute and B none: B's next call takes A's newest place.
    calls.push(work('b2', 'B'));
    expect(await calls[2]).toBeInstanceOf(HashingBusy);
    // Again: A's last waiting call goes; then B's own line is full (3), and its next call finds no place.
    calls.push(work('b3', 'B'));
    expect(await calls[1]).toBeInstanceOf(HashingBusy);
    expect(await work('b4', 'B')).toBeInstanceOf(HashingBusy);
    expect([slots.running, slots.waiting]).toEqual([1, 4]);
    g.open();
    expect(await Promise.all(calls)).toEqual(['a0', ...Array(3).fill(expect.any(HashingBusy)), 'b1', 'c1', 'b2', 'b3']);
    expect(order).toEqual(['a0', 'b1', 'c1', 'b2', 'b3']);
    expect([slots.running, slots.waiting]).toEqual([0, 0]);
  });

  it('lets a newcomer in when many addresses with one call each fill the line: it takes the place of one that had hashes lately', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 4 });
    const order: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const work = (name: string, address: string) => {
      const g = gate();
      gates.set(name, g);
      return slots.run(async () => (order.push(name), g.opened), address).then(() => name, (e: unknown) => e);
    };
    // Five addresses, one call each, served in turn: each has had one hash this minute.
    const first = ['A', 'B', 'C', 'D', 'E'].map((a) => work(`${a}1`, a));
    for (const a of ['A', 'B', 'C', 'D', 'E']) {
      gates.get(`${a}1`)!.open();
      await first[['A', 'B', 'C', 'D', 'E'].indexOf(a)];
    }
    expect(order).toEqual(['A1', 'B1', 'C1', 'D1', 'E1']);
    // Again, one call each: A runs, the four others fill the line, each address one waiting.
    const second = ['A', 'B', 'C', 'D', 'E'].map((a) => work(`${a}2`, a));
    expect([slots.running, slots.waiting]).toEqual([1, 4]);
    // A newcomer with no hash this minute takes the place of one of them; another of theirs does not.
    const newcomer = work('F1', 'F');
    expect(await second[1]).toBeInstanceOf(HashingBusy); // B's, the first of the busiest
    expect(await work('G1', 'B')).toBeInstanceOf(HashingBusy); // B had a hash lately too: no place taken for it
    expect([slots.running, slots.waiting]).toEqual([1, 4]);
    for (const name of ['A2', 'C2', 'D2', 'E2', 'F1']) gates.get(name)!.open();
    expect(await newcomer).toBe('F1');
    expect(order.slice(5)).toEqual(['A2', 'C2', 'D2', 'E2', 'F1']);
  });

  it('frees the slot when the work throws', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 0 });
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'next')).toBe('next');
  });
});

describe('the addresses that got a token lately', () => {
  it('are kept per client id: ever new addresses of one client push out its own oldest, never another client\'s', () => {
    const trusted = trustedAddresses();
    trusted.add('owner', '203.0.113.9');
    for (let i = 0; i < 5_000; i++) trusted.add('flooder', `2001:db8:${i.toString(16)}::/64`);
    expect(trusted.has('owner', '203.0.113.9')).toBe(true);
    expect(trusted.has('flooder', '2001:db8:0::/64')).toBe(false);
    expect(trusted.has('flooder', `2001:db8:${(4_999).toString(16)}::/64`)).toBe(true);
    const kept = Array.from({ length: 5_000 }, (_, i) => trusted.has('flooder', `2001:db8:${i.toString(16)}::/64`)).filter(Boolean);
    expect(kept).toHaveLength(MAX_TRUSTED_PER_CLIENT);
    expect(trusted.has('owner', '198.51.100.1')).toBe(false); // another address of the owner's
  });

  it('are forgotten 24 hours after their last token', () => {
    let now = 1_000_000;
    const trusted = trustedAddresses(() => now);
    trusted.add('owner', 'a');
    now += TRUSTED_ADDRESS_MS - 1;
    expect(trusted.has('owner', 'a')).toBe(true);
    trusted.add('owner', 'a'); // a new token: 24 hours from now
    now += TRUSTED_ADDRESS_MS - 1;
    expect(trusted.has('owner', 'a')).toBe(true);
    now += 1;
    expect(trusted.has('owner', 'a')).toBe(false);
  });
});

describe('the service under a flood', () => {
  const client = { clientId: 'flooded-client', sellerId: DEMO_SELLER_ID, country: 'BR', tenant: 'sandbox', secretHash: '' };
  const repository = { findApiClient: async (id: string) => (id === client.clientId ? client : undefined) } as unknown as AuthenticationRepository;
  const tokens = { issue: async () => ({ accessToken: 'token', expiresIn: 3599, scope: 'digital-plataform:gateway-api' }) } as unknown as AccessTokens;
  const form = (clientSecret: string, clientId = client.clientId) => ({ client_id: clientId, client_secret: clientSecret, scope: 'digital-plataform:gateway-api' });
  const outcome = (p: Promise<unknown>) => p.then(() => 200, (e: ApiError) => e.status);
  beforeAll(async () => {
    client.secretHash = await hashClientSecret('right-secret');
  });
  beforeEach(() => scryptCalls.mockClear());

  it('answers 429 with Retry-After: 1 when the line is full, and lets a remembered secret through', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 1 });
    const service = authenticationService(repository, tokens, { slots });
    await service.issueForBodyCredentials(form('right-secret'), '203.0.113.9'); // remembered from now on
    const guesses = ['a', 'b', 'c'].map((guess) => service.issueForBodyCredentials(form(guess, `unknown-${guess}`), '203.0.113.9').catch((e: unknown) => e));
    expect(await service.issueForBodyCredentials(form('right-secret'), '203.0.113.9')).toMatchObject({ accessToken: 'token' });
    const [, , busy] = await Promise.all(guesses);
    expect(busy).toBeInstanceOf(ApiError);
    expect(busy).toMatchObject({ status: 429, code: 'too_many_requests', headers: { 'Retry-After': '1' } });
  });

  it("checks a first correct secret from another address while a flood of unknown client ids from one address fills the line", async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 2 });
    const service = authenticationService(repository, tokens, { slots });
    const flood = Array.from({ length: 6 }, (_, i) => outcome(service.issueForBodyCredentials(form(`guess-${i}`, `unknown-${i}`), '198.51.100.7')));
    await vi.waitFor(() => expect([slots.running, slots.waiting]).toEqual([1, 2])); // the flood holds the slot and the whole line
    // Never checked on this service before: it needs a hash, in the line the flood fills.
    const owner = await outcome(service.issueForBodyCredentials(form('right-secret'), '203.0.113.9'));
    expect(owner).toBe(200);
    const statuses = await Promise.all(flood);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3); // the flood lost places, not the owner
  });

  it("counts wrong secrets per IPv6 /64: a neighbour's network in the same /56 cannot lock the owner out", async () => {
    const service = authenticationService(repository, tokens, { attempts: failedAttempts({ limit: 2, windowMs: 60_000 }) });
    const neighbour = ['2001:db8:0:2::1', '2001:db8:0:2::99']; // one /64, two hosts: one count
    for (const [i, address] of neighbour.entries()) expect(await outcome(service.issueForBodyCredentials(form(`guess-${i}`), address))).toBe(401);
    expect(await outcome(service.issueForBodyCredentials(form('right-secret'), neighbour[0]!))).toBe(429);
    expect(await outcome(service.issueForBodyCredentials(form('right-secret'), '2001:db8:0:1::1'))).toBe(200); // the owner's /64, same /56
  });

  it('hashes no more guesses for one client than its limit, however many arrive at once', async () => {
    const slots = hashingSlots({ concurrency: 1, maxWaiting: 100 });
    const service = authenticationService(repository, tokens, { slots, attempts: failedAttempts({ limit: 2, windowMs: 60_000 }) });
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => outcome(service.issueForBodyCredentials(form(`guess-${i}`), '203.0.113.9'))));
    expect(statuses).toEqual([401, 401, ...Array(8).fill(429)]);
    expect(scryptCalls).toHaveBeenCalledTimes(2);
  });
});
