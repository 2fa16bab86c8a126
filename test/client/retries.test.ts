// Retries of the platform client against a local server that fails N times: only operations safe to
// repeat (GET, token requests, the contract's idempotent updates) are sent again, after connection
// failures, 429 and 502/503/504; Retry-After is honoured in seconds and as an HTTP date; each attempt
// reaches the observer; a payment intent is never sent twice. Tiny backoff bases keep it fast.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { operations } from '@payment-platform/contract/operations';
import {
  createPlatformClient,
  dataOrThrow,
  isPlatformApiError,
  isPlatformConnectionError,
  isSafeToRetry,
  PlatformApiError,
  PlatformConnectionError,
  type PlatformClientOptions,
  type RequestObservation,
} from '../../client/index.ts';
import { findRoute } from '../../client/contract.ts';
import { retryAfterMs, retryDelayMs } from '../../client/retry.ts';
import { SELLER, startFlakyServer, type FlakyServer } from './flaky-server.ts';

const SELLERS = '/dpy/payment-link/v1/sellers';
const INTENT = '/dpy/web-checkout/v1/payment-intent';
const EVENT_ID = '9b2d5f4e-8c1a-4e7b-a3d6-5f0c2e8b1a47';
const EVENT = `/dpm/webhooks/v1/subscriptions/payment/events/${EVENT_ID}`;
const TOKEN = '/authentication/oauth2/-core/access_token';

let platform: FlakyServer;
let observed: RequestObservation[];

beforeEach(async () => {
  platform = await startFlakyServer();
  observed = [];
});
afterEach(() => platform.close());

function clientFor(options: Partial<PlatformClientOptions> = {}) {
  return createPlatformClient({
    baseUrl: platform.url,
    clientId: 'demo-seller-client',
    clientSecret: 'demo-seller-secret',
    retryBaseDelayMs: 5,
    observe: (o) => observed.push(o),
    ...options,
  });
}

const calls = (path: string) => platform.requests.filter((r) => r.path === path);
const attemptsOf = (operationId: string) => observed.filter((o) => o.operationId === operationId).map((o) => [o.attempt, o.status ?? o.error, o.retryInMs !== undefined]);
const unavailable = { status: 503, body: { error_code: 'service_unavailable', message: 'Service unavailable', status_code: 503 } };

describe('which operations are retried', () => {
  it('decides from the operation table: safe methods, token requests and the contract idempotent updates only', () => {
    const retried = operations.filter((op) => isSafeToRetry(op.method, findRoute(op.method, op.path))).map((op) => op.operationId);
    expect(retried).toEqual([
      'issueAccessToken',
      'issueAccessTokenWithBasicAuth',
      'listPaymentLinks',
      'getPaymentLinkByShortId',
      'getSeller',
      'getBusinessConfiguration',
      'getPaymentLinkOrder',
      'updateTechnicalConfiguration',
      'getSubscription',
      'updateFloatingInstallment',
      'updatePlanStatus',
      'applySubscriptionEvent',
      'listSandboxNotifications',
      'getSandboxNotification',
      'getSandboxTestClock',
      'listSandboxSubscriptionCharges',
      'getSandboxJwks',
    ]);
    // Nothing that creates or charges.
    for (const id of ['createPaymentIntent', 'createSubscription', 'uploadProductImage', 'createSandboxPlan', 'advanceSandboxTestClock']) {
      expect(retried).not.toContain(id);
    }
  });

  it('reads Retry-After as seconds or as an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sun, 22 Nov 2026 10:00:02 GMT', now)).toBe(2000);
    expect(retryAfterMs('Sun, 22 Nov 2026 09:59:00 GMT', now)).toBe(0);
    for (const bad of [null, '', '1.5', '-1', 'soon', '2026-11-22']) expect(retryAfterMs(bad, now), String(bad)).toBeUndefined();
  });

  it('waits with full jitter under an exponential ceiling, or what Retry-After asks', () => {
    const timing = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, undefined, timing, () => 0.999))).toEqual([99, 199, 399, 799, 999]);
    expect(retryDelayMs(3, undefined, timing, () => 0)).toBe(0);
    expect(retryDelayMs(1, 700, timing)).toBe(700);
    expect(retryDelayMs(1, 1001, timing)).toBeUndefined();
  });
});

describe('retries against a server that fails N times', () => {
  it('retries a GET after 503s and answers the data, each attempt observed', async () => {
    platform.fail(SELLERS, unavailable, unavailable);
    const { data, failure } = await clientFor().GET(SELLERS);
    expect(data).toEqual(SELLER);
    expect(failure).toBeUndefined();
    expect(calls(SELLERS)).toHaveLength(3);
    expect(attemptsOf('getSeller')).toEqual([
      [1, 503, true],
      [2, 503, true],
      [3, 200, false],
    ]);
  });

  it('stops after maxRetries (2 by default) and returns the last answer with its failure', async () => {
    platform.fail(SELLERS, unavailable, { status: 502 }, { status: 504, body: { error_code: 'gateway_timeout', message: 'Upstream timed out', status_code: 504 } }, unavailable);
    const result = await clientFor().GET(SELLERS);
    expect(calls(SELLERS)).toHaveLength(3);
    expect(result.response.status).toBe(504);
    expect(result.error).toEqual({ error_code: 'gateway_timeout', message: 'Upstream timed out', status_code: 504 });
    expect(result.failure).toBeInstanceOf(PlatformApiError);
    expect(result.failure).toMatchObject({ operationId: 'getSeller', status: 504, code: 'gateway_timeout', platformMessage: 'Upstream timed out', body: result.error });
    expect(result.failure?.message).toBe('getSeller answered 504, gateway_timeout: Upstream timed out');
    expect(() => dataOrThrow(result)).toThrow(result.failure!);
    // The next call starts afresh: one failure left, then the seller.
    expect((await clientFor().GET(SELLERS)).data).toEqual(SELLER);
  });

  it('takes maxRetries per client and per call', async () => {
    platform.fail(SELLERS, unavailable, unavailable, unavailable, unavailable, unavailable);
    const none = clientFor({ maxRetries: 0 });
    expect((await none.GET(SELLERS)).response.status).toBe(503);
    expect(calls(SELLERS)).toHaveLength(1);
    expect((await none.GET(SELLERS, { maxRetries: 1 })).response.status).toBe(503);
    expect(calls(SELLERS)).toHaveLength(3);
    // Two failures left: a per-call 3 gets through on its third attempt.
    expect((await clientFor({ maxRetries: 0 }).GET(SELLERS, { maxRetries: 3 })).data).toEqual(SELLER);
    expect(calls(SELLERS)).toHaveLength(6);
  });

  it('honours Retry-After in seconds', async () => {
    platform.fail(SELLERS, { status: 429, retryAfter: '1', body: { error_code: 'too_many_requests', message: 'Too many requests', status_code: 429 } });
    const started = Date.now();
    const { data } = await clientFor().GET(SELLERS);
    expect(data).toEqual(SELLER);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(observed.find((o) => o.operationId === 'getSeller')).toMatchObject({ attempt: 1, status: 429, retryInMs: 1000 });
  });

  it('honours Retry-After as an HTTP date', async () => {
    // A whole second (an HTTP date has no more), 1 to 2 s ahead: the wait is what is left until it.
    const started = Date.now();
    const at = new Date((Math.floor(started / 1000) + 2) * 1000);
    platform.fail(SELLERS, { status: 503, retryAfter: at.toUTCString() });
    const { data } = await clientFor().GET(SELLERS);
    expect(data).toEqual(SELLER);
    const first = observed.find((o) => o.operationId === 'getSeller')!;
    expect(first.retryInMs).toBeGreaterThan(500); // not the default backoff: at least 1 s minus the first answer's time
    expect(first.retryInMs).toBeLessThanOrEqual(at.getTime() - started);
    const second = platform.requests.filter((r) => r.path === SELLERS);
    expect(second).toHaveLength(2);
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime() - 20);
  });

  it('returns a 429 whose Retry-After is longer than retryMaxDelayMs instead of waiting', async () => {
    platform.fail(SELLERS, { status: 429, retryAfter: '120', body: { error_code: 'too_many_requests', message: 'Too many requests', status_code: 429 } });
    const { failure } = await clientFor({ retryMaxDelayMs: 5_000 }).GET(SELLERS);
    expect(calls(SELLERS)).toHaveLength(1);
    expect(failure).toMatchObject({ status: 429, code: 'too_many_requests', retryAfterMs: 120_000 });
  });

  it('retries a dropped connection of a GET', async () => {
    platform.fail(SELLERS, 'drop');
    const { data } = await clientFor().GET(SELLERS);
    expect(data).toEqual(SELLER);
    expect(attemptsOf('getSeller')).toEqual([
      [1, 'TypeError', true],
      [2, 200, false],
    ]);
  });

  it('throws a typed connection error once the retries are spent', async () => {
    platform.fail(SELLERS, 'drop', 'drop', 'drop');
    const failure = await clientFor({ maxRetries: 2 }).GET(SELLERS).catch((e: unknown) => e);
    expect(isPlatformConnectionError(failure)).toBe(true);
    expect(failure).toMatchObject({ name: 'ConnectionError', operationId: 'getSeller', status: undefined, code: 'connection_error', attempts: 3 });
    expect((failure as Error).cause).toBeInstanceOf(TypeError);
  });

  it('says where and why a connection failed, from the cause fetch keeps it in: a refused port, a name that does not resolve', async () => {
    const closed = new URL(platform.url);
    await platform.close(); // nothing listens there any more
    const refused = await clientFor({ maxRetries: 0 }).GET(SELLERS).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'ConnectionError', code: 'connection_error', operationId: 'issueAccessToken', attempts: 1 });
    expect((refused as Error).message).toBe(`issueAccessToken failed, connection_error: fetch failed: connect ECONNREFUSED 127.0.0.1:${closed.port} (1 attempt)`);
    const unknown = createPlatformClient({ baseUrl: 'http://no-such-host.invalid', clientId: 'a', clientSecret: 'b', maxRetries: 0 });
    const unresolved = await unknown.GET(SELLERS).catch((e: unknown) => e);
    expect((unresolved as Error).message).toMatch(/^issueAccessToken failed, connection_error: fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid \(1 attempt\)$/);
    platform = await startFlakyServer(); // for afterEach
  });

  it('keeps the message whole when a cause cannot be read: no prototype, a throwing getter, an empty AggregateError', async () => {
    const unreadable = { get message(): string { throw new Error('no'); } };
    const causes = [Object.create(null), Object.setPrototypeOf(new Error('x'), null), unreadable, new AggregateError([], '')];
    for (const cause of causes) {
      const failing = async () => Promise.reject(new TypeError('fetch failed', { cause }));
      const failure = await clientFor({ fetch: failing, maxRetries: 1 }).GET(SELLERS).catch((e: unknown) => e);
      expect(failure).toMatchObject({ name: 'ConnectionError', operationId: 'issueAccessToken', attempts: 2 });
      expect((failure as Error).message).toMatch(/^issueAccessToken failed, connection_error: fetch failed(: .+)? \(2 attempts\)$/);
      expect((failure as Error).message).not.toContain('undefined');
    }
  });

  it('never sends a payment intent twice: not after a 503, not after a dropped connection', async () => {
    const body = { order_id: 'PED-1' } as never;
    platform.fail(INTENT, unavailable);
    const refused = await clientFor().POST(INTENT, { body });
    expect(refused.response.status).toBe(503);
    expect(refused.failure).toMatchObject({ operationId: 'createPaymentIntent', status: 503, code: 'service_unavailable' });
    expect(calls(INTENT)).toHaveLength(1);

    platform.fail(INTENT, 'drop');
    const dropped = await clientFor({ maxRetries: 5 }).POST(INTENT, { body, maxRetries: 5 }).catch((e: unknown) => e);
    expect(dropped).toBeInstanceOf(PlatformConnectionError);
    expect(dropped).toMatchObject({ operationId: 'createPaymentIntent', attempts: 1 });
    expect(calls(INTENT)).toHaveLength(2);
    expect(attemptsOf('createPaymentIntent')).toEqual([
      [1, 503, false],
      [1, 'TypeError', false],
    ]);
  });

  it('retries the subscription event PATCH with the same idempotency key, applied once', async () => {
    platform.fail(EVENT, { status: 502 }, 'drop');
    const body = { idempotency_key: '3b241101-e2bb-4255-8caf-4136c566a962', payment_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', status: 'APPROVED' } as const;
    const { data } = await clientFor().PATCH('/dpm/webhooks/v1/subscriptions/{event_name}/events/{event_id}', {
      params: { path: { event_name: 'payment', event_id: EVENT_ID } },
      body,
    });
    expect(data).toMatchObject({ idempotency_key: body.idempotency_key, status: 'APPROVED' });
    expect(calls(EVENT).map((r) => JSON.parse(r.body))).toEqual([body, body, body]);
    expect([...platform.appliedEvents]).toEqual([[body.idempotency_key, 'APPROVED']]);
  });

  it('retries the token request (429 with Retry-After 0) and then makes the call', async () => {
    platform.fail(TOKEN, { status: 429, retryAfter: '0', body: { error_code: 'too_many_requests', message: 'Too many requests', status_code: 429 } });
    const { data } = await clientFor().GET(SELLERS);
    expect(data).toEqual(SELLER);
    expect(calls(TOKEN)).toHaveLength(2);
    expect(attemptsOf('issueAccessToken')).toEqual([
      [1, 429, true],
      [2, 200, false],
    ]);
  });

  it('throws the token endpoint failure with its operationId, status, code and message when retries are spent', async () => {
    platform.fail(TOKEN, unavailable, unavailable, unavailable);
    const failure = await clientFor().GET(SELLERS).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TokenEndpointError', operationId: 'issueAccessToken', status: 503, code: 'service_unavailable', platformMessage: 'Service unavailable' });
    expect(calls(SELLERS)).toHaveLength(0);
  });

  it('gives a token refusal the wait its Retry-After asks (too many failed attempts), and none to one without it', async () => {
    const throttled = { status: 429, retryAfter: '42', body: { error_code: 'too_many_requests', message: 'Too many failed attempts for this client, retry after the time in Retry-After', status_code: 429 } };
    platform.fail(TOKEN, throttled);
    const failure = await clientFor({ retryMaxDelayMs: 1_000 }).GET(SELLERS).catch((e: unknown) => e); // 42 s is longer: not waited
    expect(failure).toMatchObject({ name: 'TokenEndpointError', status: 429, code: 'too_many_requests', retryAfterMs: 42_000 });
    platform.fail(TOKEN, unavailable, unavailable, unavailable);
    expect(await clientFor().GET(SELLERS).catch((e: unknown) => e)).toMatchObject({ name: 'TokenEndpointError', status: 503, retryAfterMs: undefined });
  });

  it('types a returned platform error with its code, and dataOrThrow throws it', async () => {
    const client = clientFor();
    const missing = await client.GET('/dpy/payment-link/v1/payment-links/{link_id}/orders/{order_id}', {
      params: { path: { link_id: '1c7b2a9e-4f3d-4e8a-9b6c-2d5e8f1a3b7c', order_id: '8d3f6a2b-9c1e-4b7d-a5f8-3e2c1b9d7a6f' } },
    });
    expect(missing.failure).toMatchObject({ operationId: 'getPaymentLinkOrder', status: 404, code: 'not_found', platformMessage: 'Not found' });
    const thrown = (() => {
      try {
        dataOrThrow(missing);
      } catch (error) {
        return error;
      }
    })();
    expect(isPlatformApiError(thrown) && thrown.body).toEqual({ error_code: 'not_found', message: 'Not found', status_code: 404 });
  });
});

describe('per-call signal and timeout, on top of the client-wide ones', () => {
  it('aborts a call waiting for its retry when its signal aborts', async () => {
    platform.fail(SELLERS, { status: 503, retryAfter: '5' });
    const controller = new AbortController();
    const started = Date.now();
    // Aborted 50 ms into the wait for its 5 s retry (timed from the first answer, however long the token took).
    const observe = (o: RequestObservation) => o.operationId === 'getSeller' && o.retryInMs !== undefined && setTimeout(() => controller.abort(), 50);
    const failure = await clientFor({ observe }).GET(SELLERS, { signal: controller.signal }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', operationId: 'getSeller' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(calls(SELLERS)).toHaveLength(1);
  });

  it('bounds the whole call, retries included, with the per-call timeoutMs', async () => {
    // Every attempt fails: with full jitter, three 503s could all be retried within 250 ms (the
    // backoff waits 0–400, 0–800, 0–1,600 ms), and the fourth attempt then succeeded. Eleven cannot.
    platform.fail(SELLERS, ...Array.from({ length: 11 }, () => unavailable));
    const started = Date.now();
    const failure = await clientFor({ retryBaseDelayMs: 400, maxRetries: 10 }).GET(SELLERS, { timeoutMs: 250 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'getSeller' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('keeps the client-wide timeoutMs per exchange under a longer per-call timeout', async () => {
    platform.delayMs = 300;
    const failure = await clientFor({ timeoutMs: 50, maxRetries: 0 }).GET(SELLERS, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'TimeoutError', code: 'timeout', attempts: 1 });
  });

  it('answers normally within the per-call timeout', async () => {
    platform.delayMs = 20;
    const { data } = await clientFor().GET(SELLERS, { timeoutMs: 5_000, signal: new AbortController().signal });
    expect(data).toEqual(SELLER);
  });

  it('aborts every call with the client-wide signal', async () => {
    const controller = new AbortController();
    const client = clientFor({ signal: controller.signal });
    expect((await client.GET(SELLERS)).data).toEqual(SELLER);
    platform.delayMs = 2_000;
    const pending = client.GET(SELLERS).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ name: 'AbortError', code: 'aborted' });
  });
});
