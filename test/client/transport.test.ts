// How the transport sends a call: openapi-fetch hands it the URL and init of a call (no Request of
// its own) unless a middleware needs one, and the transport makes one Request per exchange. A call
// makes no AbortSignal when nothing can end it early, one timeout signal per exchange when the
// client has a timeoutMs, and each of the per-call signal, per-call timeoutMs, client-wide timeoutMs
// and client-wide signal still ends a call on its own. Middleware receives real Requests and never
// the access token; the `fetch` option receives the final Request, body and token included.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Middleware } from 'openapi-fetch';
import { createPlatformClient, type PlatformClientOptions } from '../../client/index.ts';
import { SELLER, startFlakyServer, type FlakyServer } from './flaky-server.ts';

const SELLERS = '/dpy/payment-link/v1/sellers';
const EVENT_ID = '9b2d5f4e-8c1a-4e7b-a3d6-5f0c2e8b1a47';
const EVENT = `/dpm/webhooks/v1/subscriptions/payment/events/${EVENT_ID}`;
const EVENT_BODY = { idempotency_key: '3b241101-e2bb-4255-8caf-4136c566a962', payment_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', status: 'APPROVED' } as const;

let platform: FlakyServer;

beforeEach(async () => {
  platform = await startFlakyServer();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await platform.close();
});

function clientFor(options: Partial<PlatformClientOptions> = {}) {
  return createPlatformClient({ baseUrl: platform.url, clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret', retryBaseDelayMs: 5, ...options });
}

/** A client whose token is already cached, so that a test times the call alone. */
async function warmClient(options: Partial<PlatformClientOptions> = {}) {
  const client = clientFor(options);
  expect((await client.GET(SELLERS)).data).toEqual(SELLER);
  return client;
}

const sellerCalls = () => platform.requests.filter((r) => r.path === SELLERS);

describe('signals: none made when nothing can end a call, and each option ends it alone', () => {
  it('makes no AbortSignal for a call without a signal or timeout, one timeout per exchange with a client timeoutMs', async () => {
    const plain = await warmClient();
    const timed = await warmClient({ timeoutMs: 5_000 });
    const any = vi.spyOn(AbortSignal, 'any');
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    expect((await plain.GET(SELLERS)).data).toEqual(SELLER);
    expect([any.mock.calls.length, timeout.mock.calls.length]).toEqual([0, 0]);
    expect((await timed.GET(SELLERS)).data).toEqual(SELLER);
    expect([any.mock.calls.length, timeout.mock.calls.length]).toEqual([0, 1]);
    // Both a call signal and an exchange timeout: then they are joined.
    expect((await timed.GET(SELLERS, { signal: new AbortController().signal })).data).toEqual(SELLER);
    expect([any.mock.calls.length, timeout.mock.calls.length]).toEqual([1, 2]);
  });

  it('ends a slow exchange with the client-wide timeoutMs alone (no per-call option), after the retries of a GET', async () => {
    const client = await warmClient({ timeoutMs: 500, maxRetries: 1 }); // its warm-up has the same limit: room for a loaded machine
    platform.delayMs = 10_000;
    const started = Date.now();
    const failure = await client.GET(SELLERS).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'getSeller', attempts: 2 });
    expect(Date.now() - started).toBeLessThan(5_000); // two exchanges of 500 ms, not the answer's 10 s
  });

  it('aborts an exchange in flight with the per-call signal alone', async () => {
    const client = await warmClient();
    platform.delayMs = 2_000;
    const controller = new AbortController();
    platform.onRequest = () => controller.abort(); // the exchange is in flight: the server has it
    const started = Date.now();
    const failure = await client.GET(SELLERS, { signal: controller.signal }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', operationId: 'getSeller', attempts: 1 });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('ends an exchange in flight with the per-call timeoutMs alone', async () => {
    const client = await warmClient();
    platform.delayMs = 2_000;
    const started = Date.now();
    const failure = await client.GET(SELLERS, { timeoutMs: 60 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'getSeller' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('aborts an exchange in flight with the client-wide signal alone', async () => {
    const controller = new AbortController();
    const client = await warmClient({ signal: controller.signal });
    platform.delayMs = 2_000;
    platform.onRequest = () => controller.abort();
    const failure = await client.GET(SELLERS).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', attempts: 1 });
  });

  it('rejects at once a call whose signal has already aborted, sending nothing', async () => {
    const client = await warmClient();
    const before = sellerCalls().length;
    const failure = await client.GET(SELLERS, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted' });
    expect(sellerCalls()).toHaveLength(before);
  });
});

describe('the Request a fetch option or a middleware receives', () => {
  it('gives the fetch option one Request per exchange, with the token and the same body on a retry', async () => {
    const sent: Array<{ request: Request; body: string }> = [];
    const client = clientFor({
      fetch: async (request) => {
        expect(request).toBeInstanceOf(Request);
        sent.push({ request, body: await request.clone().text() });
        return fetch(request);
      },
    });
    platform.fail(EVENT, { status: 503 });
    const { data } = await client.PATCH('/dpm/webhooks/v1/subscriptions/{event_name}/events/{event_id}', {
      params: { path: { event_name: 'payment', event_id: EVENT_ID } },
      body: EVENT_BODY,
    });
    expect(data).toMatchObject({ status: 'APPROVED' });
    const events = sent.filter((s) => new URL(s.request.url).pathname === EVENT);
    expect(events.map((s) => [s.request.method, s.request.headers.get('authorization'), s.request.headers.get('content-type'), JSON.parse(s.body)])).toEqual([
      ['PATCH', 'Bearer tok-1', 'application/json', EVENT_BODY],
      ['PATCH', 'Bearer tok-1', 'application/json', EVENT_BODY],
    ]);
  });

  it('sends a stream body once read, so that a retry sends it again', async () => {
    const client = await warmClient();
    platform.fail(EVENT, { status: 502 });
    const text = JSON.stringify(EVENT_BODY);
    const { data } = await client.PATCH('/dpm/webhooks/v1/subscriptions/{event_name}/events/{event_id}', {
      params: { path: { event_name: 'payment', event_id: EVENT_ID } },
      body: EVENT_BODY,
      bodySerializer: () => new Blob([text]).stream(),
    });
    expect(data).toMatchObject({ status: 'APPROVED' });
    expect(platform.requests.filter((r) => r.path === EVENT).map((r) => r.body)).toEqual([text, text]);
  });

  it('runs middleware registered with use on real Requests, never showing them the token, and stops after eject', async () => {
    const client = await warmClient();
    const seen: Array<{ stage: string; isRequest: boolean; authorization: string | null }> = [];
    const middleware: Middleware = {
      onRequest({ request }) {
        seen.push({ stage: 'request', isRequest: request instanceof Request, authorization: request.headers.get('authorization') });
        const changed = new Request(request);
        changed.headers.set('x-added', 'yes');
        return changed;
      },
      onResponse({ request, response }) {
        seen.push({ stage: 'response', isRequest: request instanceof Request, authorization: request.headers.get('authorization') });
        return response;
      },
    };
    client.use(middleware);
    expect((await client.GET(SELLERS)).data).toEqual(SELLER);
    expect(sellerCalls().at(-1)?.authorization).toBe('Bearer tok-1');
    expect(seen).toEqual([
      { stage: 'request', isRequest: true, authorization: null },
      { stage: 'response', isRequest: true, authorization: null },
    ]);
    client.eject(middleware);
    expect((await client.GET(SELLERS)).data).toEqual(SELLER);
    expect(seen).toHaveLength(2);
  });

  it('runs a per-call middleware on a real Request', async () => {
    const client = await warmClient();
    const urls: string[] = [];
    const { data } = await client.GET(SELLERS, {
      middleware: [
        {
          onRequest({ request }) {
            urls.push(request instanceof Request ? request.url : 'not a Request');
          },
        },
      ],
    });
    expect(data).toEqual(SELLER);
    expect(urls).toEqual([`${platform.url}${SELLERS}`]);
  });
});
