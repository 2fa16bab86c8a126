// The client against a platform (or a proxy in front of it) that misbehaves: redirects to another
// host, stalled or truncated answers, bodies too large to hold, tokens no header can carry, error
// texts that quote the client secret, a server that ignores `page`; and calls the client must refuse
// before sending: a signal already aborted, a protected call sent elsewhere than `baseUrl`, options
// out of range. Each one ends in a PlatformError (or a TypeError for a programming error), never in
// a raw fetch error, an unhandled rejection, or a secret sent or quoted where it should not be.
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient, isPlatformError, TokenEndpointError, type PlatformClientOptions } from '../../client/index.ts';
import { sleep } from '../../client/retry.ts';
import { makeLinks, SELLER, startFlakyServer, type FlakyServer } from './flaky-server.ts';

const SELLERS = '/dpy/payment-link/v1/sellers';
const INTENT = '/dpy/web-checkout/v1/payment-intent';
const TOKEN = '/authentication/oauth2/-core/access_token';
const SECRET = 'demo-seller-secret';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A server on 127.0.0.1 whose answer the test writes; it records what reached it. */
async function hostile(handler: Handler) {
  const seen: Array<{ method: string; path: string; body: string; authorization: string | undefined }> = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method ?? '', path: new URL(req.url ?? '/', 'http://x').pathname, body, authorization: req.headers.authorization });
    handler(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

const token = (res: ServerResponse, accessToken: unknown = 'tok-1') =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3599 }));

let servers: Array<{ close(): Promise<void> }> = [];
let platform: FlakyServer;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeEach(async () => {
  platform = await startFlakyServer();
  servers = [platform];
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  // A rejection nobody handled shows up a turn or two after the call.
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.off('unhandledRejection', onUnhandled);
  await Promise.all(servers.map((s) => s.close()));
  expect(unhandled).toEqual([]);
});

async function serve(handler: Handler) {
  const server = await hostile(handler);
  servers.push(server);
  return server;
}

const clientOf = (baseUrl: string, options: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({ baseUrl, clientId: 'demo-seller-client', clientSecret: SECRET, retryBaseDelayMs: 5, ...options });

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e);

describe('a signal already aborted', () => {
  it('rejects the call with an AbortError and sends nothing, even when the token endpoint would refuse', async () => {
    const refusing = await serve((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error_code":"invalid_client","message":"no","status_code":401}'));
    const failure = await failureOf(clientOf(refusing.url).GET(SELLERS, { signal: AbortSignal.abort() }));
    expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', operationId: 'getSeller', attempts: 0 });
    expect(refusing.seen).toEqual([]);
  });

  it('rejects every call of a client whose own signal has aborted (a shutdown), without a token request', async () => {
    const client = clientOf(platform.url, { signal: AbortSignal.abort() });
    const failures = await Promise.all([failureOf(client.GET(SELLERS)), failureOf(client.GET(SELLERS))]);
    for (const failure of failures) expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', attempts: 0 });
    expect(platform.requests).toEqual([]);
  });
});

describe('a client-wide signal shared by many calls', () => {
  const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
  /** The MaxListenersExceededWarnings emitted while `run` runs (Node emits a warning on a later tick). */
  async function warningsDuring(run: () => Promise<void>) {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      await run();
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('warning', onWarning);
    }
    return warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'));
  }
  const slowToken = () =>
    serve((req, res) => {
      if (req.url === TOKEN) return void setTimeout(() => token(res), 150);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SELLER));
    });

  it('keeps one abort listener on it while 30 calls wait for one token, and no MaxListenersExceededWarning', async () => {
    const server = await slowToken();
    const controller = new AbortController();
    const client = clientOf(server.url, { signal: controller.signal });
    const warnings = await warningsDuring(async () => {
      const calls = Promise.all(Array.from({ length: 30 }, () => client.GET(SELLERS)));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(abortListeners(controller.signal)).toBe(1);
      const answers = await calls;
      expect(answers.map((a) => [a.response.status, a.data])).toEqual(Array(30).fill([200, SELLER]));
    });
    expect(warnings).toEqual([]);
    expect(server.seen.filter((r) => r.path === TOKEN)).toHaveLength(1);
  });

  it('ends all 30 waiting calls when it aborts, as AbortErrors, and leaves no listener on it', async () => {
    const server = await slowToken();
    const controller = new AbortController();
    const client = clientOf(server.url, { signal: controller.signal });
    const warnings = await warningsDuring(async () => {
      const failures = Promise.all(Array.from({ length: 30 }, () => failureOf(client.GET(SELLERS))));
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();
      for (const failure of await failures) expect(failure).toMatchObject({ name: 'AbortError', code: 'aborted', operationId: 'getSeller', attempts: 0 });
    });
    expect(warnings).toEqual([]);
    expect(server.seen.filter((r) => r.path === SELLERS)).toEqual([]);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('keeps one abort listener for 30 pauses before a retry, rejects them all with its reason, and stops listening when they end', async () => {
    const controller = new AbortController();
    const pauses = Array.from({ length: 30 }, () => sleep(20, controller.signal));
    expect(abortListeners(controller.signal)).toBe(1);
    await Promise.all(pauses);
    expect(abortListeners(controller.signal)).toBe(0);
    const reason = new Error('shutting down');
    const aborted = Array.from({ length: 30 }, () => failureOf(sleep(10_000, controller.signal)));
    controller.abort(reason);
    expect(await Promise.all(aborted)).toEqual(Array(30).fill(reason));
    expect(abortListeners(controller.signal)).toBe(0);
  });
});

describe('time limits after a garbage collection', () => {
  it('ends a call to a server that never answers at the client timeoutMs, with a client-wide signal or a middleware, whatever the collector did', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const silent = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      // Never answers the API.
    });
    // 1 s: time enough for the token exchange, which the same limit bounds, on a loaded machine (300 ms
    // was not, once: the token request timed out); still pending through the collections below.
    const withSignal = clientOf(silent.url, { signal: new AbortController().signal, timeoutMs: 1_000, maxRetries: 0 });
    const withMiddleware = clientOf(silent.url, { timeoutMs: 1_000, maxRetries: 0 });
    withMiddleware.use({ onRequest: () => undefined });
    for (const client of [withSignal, withMiddleware]) {
      const call = failureOf(client.GET(SELLERS));
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        gc(); // Node 20 collected a joined AbortSignal.timeout here, and its timer with it
      }
      const guard = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000).unref());
      expect(await Promise.race([call, guard])).toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'getSeller', attempts: 1 });
    }
  });
});

describe('a middleware that returns a new Request', () => {
  const rebuild = { onRequest: ({ request }: { request: Request }) => new Request(request, { headers: { ...Object.fromEntries(request.headers), 'x-added': 'yes' } }) };

  it('keeps the per-call timeoutMs and maxRetries, registered with use or given per call', async () => {
    let answers = 0;
    const server = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      answers += 1;
      if (req.headers['x-added'] !== 'yes') return res.writeHead(400).end();
      if (req.url === SELLERS) return res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
      // The payment links list stalls: only the call's own timeoutMs ends it.
    });
    const registered = clientOf(server.url);
    registered.use(rebuild);
    for (const call of [
      (timeoutMs: number) => registered.GET('/dpy/payment-link/v1/payment-links', { timeoutMs }),
      (timeoutMs: number) => clientOf(server.url).GET('/dpy/payment-link/v1/payment-links', { timeoutMs, middleware: [rebuild] }),
    ]) {
      const started = Date.now();
      // 1 s: the call's limit covers its token exchange too, which a loaded machine may take 100 ms and more to get.
      expect(await failureOf(call(1_000))).toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'listPaymentLinks', attempts: 1 });
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    answers = 0;
    const once = await registered.GET(SELLERS, { maxRetries: 0 });
    expect([once.response.status, answers]).toEqual([503, 1]);
    answers = 0;
    const perCall = await clientOf(server.url).GET(SELLERS, { maxRetries: 0, middleware: [rebuild] });
    expect([perCall.response.status, answers]).toEqual([503, 1]);
  });

  it("keeps the call's own signal when the new Request was made without it", async () => {
    const stalled = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      // Never answers the API.
    });
    const withoutSignal = { onRequest: ({ request }: { request: Request }) => new Request(request.url, { method: request.method, headers: request.headers }) };
    const client = clientOf(stalled.url, { maxRetries: 0 });
    client.use(withoutSignal);
    const started = Date.now();
    expect(await failureOf(client.GET(SELLERS, { signal: AbortSignal.timeout(1_000) }))).toMatchObject({ code: 'aborted', operationId: 'getSeller', attempts: 1 }); // the token first, however slow
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('still counts the exchanges of a call whose body fails after a retry', async () => {
    let answers = 0;
    const server = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      answers += 1;
      if (answers === 1) return res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' }).write('{"sell');
      setTimeout(() => res.destroy(), 10);
    });
    const client = clientOf(server.url);
    client.use(rebuild);
    expect(await failureOf(client.GET(SELLERS))).toMatchObject({ name: 'ConnectionError', code: 'connection_error', attempts: 2 });
  });
});

describe('redirects are never followed', () => {
  it('does not send the client secret where a 307 or 308 of the token endpoint points', async () => {
    for (const status of [307, 308, 302]) {
      const elsewhere = await serve((_req, res) => token(res, 'evil-token'));
      const redirecting = await serve((_req, res) => res.writeHead(status, { location: `${elsewhere.url}${TOKEN}` }).end());
      const failure = await failureOf(clientOf(redirecting.url).GET(SELLERS));
      expect(failure).toBeInstanceOf(TokenEndpointError);
      expect(failure).toMatchObject({ status, operationId: 'issueAccessToken' });
      expect((failure as Error).message).toContain('a redirect, which the client never follows');
      expect(elsewhere.seen).toEqual([]);
      expect(redirecting.seen.map((s) => s.path)).toEqual([TOKEN]);
    }
  });

  it('answers a redirected payment intent as a failure with its status, and sends its body nowhere else', async () => {
    const elsewhere = await serve((_req, res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'));
    const redirecting = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      res.writeHead(307, { location: `${elsewhere.url}${INTENT}`, 'content-type': 'application/json' }).end('{"message":"moved"}');
    });
    const result = await clientOf(redirecting.url).POST(INTENT, { body: { order_id: 'PED-1' } as never });
    expect(result.response.status).toBe(307);
    expect(result.failure).toMatchObject({ operationId: 'createPaymentIntent', status: 307, platformMessage: 'moved' });
    expect(elsewhere.seen).toEqual([]);
  });
});

describe('the token request', () => {
  it('is ended once no call waits for it, so a stalled answer does not hold the calls after it', async () => {
    let tokenRequests = 0;
    const stalling = await serve((req, res) => {
      if (req.url === TOKEN) {
        tokenRequests += 1;
        if (tokenRequests === 1) {
          // Headers, then one byte a second: the body never ends within the test.
          res.writeHead(200, { 'content-type': 'application/json' });
          const drip = setInterval(() => res.write(' '), 1_000);
          res.on('close', () => clearInterval(drip));
          return;
        }
        return token(res, 'tok-2');
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SELLER));
    });
    const client = clientOf(stalling.url);
    const first = await failureOf(client.GET(SELLERS, { timeoutMs: 200 }));
    expect(first).toMatchObject({ name: 'TimeoutError', code: 'timeout', attempts: 0 });
    const second = await client.GET(SELLERS, { timeoutMs: 2_000 });
    expect(second.data).toEqual(SELLER);
    expect(tokenRequests).toBe(2);
    expect(stalling.seen.at(-1)?.authorization).toBe('Bearer tok-2');
  });

  it('refuses an access token no Authorization header can carry, without quoting it', async () => {
    for (const accessToken of ['abc\r\nx-evil: 1', '', 'has space', 'nul\u0000']) {
      const issuing = await serve((_req, res) => token(res, accessToken));
      const failure = await failureOf(clientOf(issuing.url).GET(SELLERS));
      expect(failure).toBeInstanceOf(TokenEndpointError);
      expect((failure as Error).message).toContain('an access_token that is empty or not visible ASCII');
      if (accessToken) expect((failure as Error).message).not.toContain(accessToken);
      expect(issuing.seen.map((s) => s.path)).toEqual([TOKEN]);
    }
  });

  it('takes a secret out in the spellings the client sends it (form-encoded, Basic base64), at any depth, and caps the quote', async () => {
    const secret = 'p@ss w+rd/=&é';
    for (const tokenEndpoint of ['form', 'basic'] as const) {
      const echoing = await serve((req, res, body) =>
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 'invalid_request', message: `cannot read ${body} ${req.headers.authorization ?? ''}`, status_code: 400, details: [{ message: body }] })),
      );
      const failure = (await failureOf(createPlatformClient({ baseUrl: echoing.url, clientId: 'id', clientSecret: secret, tokenEndpoint }).GET(SELLERS))) as TokenEndpointError;
      const encoded = [secret, new URLSearchParams({ s: secret }).toString().slice(2), Buffer.from(`id:${secret}`).toString('base64')];
      for (const text of [failure.message, failure.platformMessage ?? '', JSON.stringify(failure.body)]) for (const spelling of encoded) expect(text).not.toContain(spelling);
    }
    const long = await serve((_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 'x'.repeat(5000), message: 'm', status_code: 400 })));
    expect(((await failureOf(clientOf(long.url).GET(SELLERS))) as Error).message.length).toBeLessThan(450);
  });

  it('takes the client secret out of an error answer that quotes it', async () => {
    const echoing = await serve((_req, res, body) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 'invalid_request', message: `cannot read ${body}`, status_code: 400 })),
    );
    const failure = (await failureOf(clientOf(echoing.url).GET(SELLERS))) as TokenEndpointError;
    expect(failure).toBeInstanceOf(TokenEndpointError);
    expect(echoing.seen[0]!.body).toContain(SECRET);
    expect(failure.message).toContain('client_secret=[client secret]');
    for (const text of [failure.message, failure.platformMessage, JSON.stringify(failure.body)]) expect(text).not.toContain(SECRET);
  });
});

describe('answers read whole, within the time limits and maxResponseBytes', () => {
  it('fails a call whose body was cut short with a PlatformConnectionError, and retries a GET whose chunked body was', async () => {
    const cuts: Array<'declared' | 'chunked'> = ['declared', 'declared', 'chunked'];
    const truncating = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      const cut = cuts.shift();
      if (cut) {
        res.writeHead(200, { 'content-type': 'application/json', ...(cut === 'declared' ? { 'content-length': '100' } : {}) }).write('{"sell');
        setTimeout(() => res.destroy(), 10);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SELLER));
    });
    const client = clientOf(truncating.url);
    const intent = await failureOf(client.POST(INTENT, { body: { order_id: 'PED-1' } as never }));
    expect(intent).toMatchObject({ name: 'ConnectionError', code: 'connection_error', operationId: 'createPaymentIntent', attempts: 1 });
    expect(isPlatformError(intent)).toBe(true);
    // A declared length is read by openapi-fetch after the exchange: the call fails, typed, unretried.
    expect(await failureOf(client.GET(SELLERS))).toMatchObject({ name: 'ConnectionError', code: 'connection_error', operationId: 'getSeller', attempts: 1 });
    // A chunked body is read inside the exchange: cut, it is retried like a dropped connection.
    expect((await client.GET(SELLERS)).data).toEqual(SELLER);
    expect(truncating.seen.filter((s) => s.path === SELLERS)).toHaveLength(3);
  });

  it('counts the exchanges before a body cut after a retried 503, with and without middleware', async () => {
    let answers = 0;
    const flaky = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      answers += 1;
      if (answers % 2 === 1) return res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' }).write('{"sell');
      setTimeout(() => res.destroy(), 10);
    });
    const client = clientOf(flaky.url);
    expect(await failureOf(client.GET(SELLERS))).toMatchObject({ name: 'ConnectionError', code: 'connection_error', attempts: 2 });
    client.use({ onRequest: ({ request }) => request });
    expect(await failureOf(client.GET(SELLERS))).toMatchObject({ name: 'ConnectionError', code: 'connection_error', attempts: 2 });
  });

  it('ends a body that trickles, declared or chunked, with the call timeoutMs or the signal, as a PlatformConnectionError', async () => {
    for (const declared of [true, false]) {
      const trickling = await serve((req, res) => {
        if (req.url === TOKEN) return token(res);
        res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': '1000' } : {}) }).write('{');
        const drip = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(drip));
      });
      const client = clientOf(trickling.url, { maxRetries: 0 });
      // 1 s: the first call's limit covers its token exchange too, which a loaded machine may take 100 ms and more to get.
      expect(await failureOf(client.GET(SELLERS, { timeoutMs: 1_000 }))).toMatchObject({ name: 'TimeoutError', code: 'timeout', attempts: 1 });
      expect(await failureOf(client.GET(SELLERS, { signal: AbortSignal.timeout(1_000) }))).toMatchObject({ code: 'aborted', attempts: 1 });
    }
  });

  it('refuses a body over maxResponseBytes, declared or streamed, without reading it whole', async () => {
    const big = 'x'.repeat(64 * 1024);
    let answers = 0;
    const huge = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      const declared = ++answers === 1; // the first answer declares its length, the second streams
      res.writeHead(500, { 'content-type': 'text/html', ...(declared ? { 'content-length': String(big.length * 64) } : {}) });
      const write = (left: number): void => {
        if (left === 0 || res.destroyed) return void res.end();
        if (res.write(big)) write(left - 1);
        else res.once('drain', () => write(left - 1));
      };
      write(64);
    });
    const client = clientOf(huge.url, { maxResponseBytes: 1024 * 1024, maxRetries: 0 });
    for (let call = 0; call < 2; call++) {
      const failure = await failureOf(client.GET(SELLERS));
      expect(failure).toMatchObject({ name: 'PlatformError', code: 'response_too_large', status: 500 });
      expect((failure as Error).message).toContain('a body over 1048576 bytes');
    }
  });

  it('bounds a compressed body by what it decodes to, not by its Content-Length', async () => {
    const packed = brotliCompressSync(Buffer.from(JSON.stringify({ ...SELLER, pad: 'a'.repeat(4 * 1024 * 1024) })));
    const bomb = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br', 'content-length': String(packed.length) }).end(packed);
    });
    expect(packed.length).toBeLessThan(1024);
    const failure = await failureOf(clientOf(bomb.url, { maxResponseBytes: 1024 * 1024 }).GET(SELLERS));
    expect(failure).toMatchObject({ code: 'response_too_large', status: 200 });
  });

  it('quotes at most 300 characters of an error page in the message, and keeps the whole page as platformMessage', async () => {
    const page = `<html>${'proxy error '.repeat(200_000)}</html>`;
    const proxy = await serve((req, res) => (req.url === TOKEN ? token(res) : res.writeHead(502, { 'content-type': 'text/html' }).end(page)));
    const result = await clientOf(proxy.url, { maxRetries: 0 }).GET(SELLERS);
    expect(result.failure!.message.length).toBeLessThan(400);
    expect(result.failure!.message).toContain(`(${page.length} characters)`);
    expect(result.failure!.platformMessage).toBe(page);
  });
});

describe('refused before sending', () => {
  it('never sends the access token to a host other than baseUrl (a per-call baseUrl, a middleware rewrite)', async () => {
    const elsewhere = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const client = clientOf(platform.url);
    const perCall = await failureOf(client.GET(SELLERS, { baseUrl: elsewhere.url } as never));
    expect(perCall).toMatchObject({ name: 'PlatformError', code: 'foreign_host', operationId: 'getSeller' });
    client.use({ onRequest: ({ request }) => new Request(request.url.replace(platform.url, elsewhere.url), request) });
    expect(await failureOf(client.GET(SELLERS))).toMatchObject({ code: 'foreign_host' });
    expect(elsewhere.seen).toEqual([]);
    // The public lookup carries no token: sent where it is asked to go.
    const lookup = await client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'Xk7pQ2aZ' } } });
    expect(lookup.response.status).toBe(200);
    expect(elsewhere.seen.map((s) => [s.path, s.authorization])).toEqual([['/dpy/payment-link/v1/payment-links/by-short-id/Xk7pQ2aZ', undefined]]);
  });

  it('refuses options out of range when the client is made, and per-call ones when the call is made', async () => {
    for (const timeoutMs of [-1, 0, Number.NaN, 1e12]) {
      expect(() => clientOf(platform.url, { timeoutMs })).toThrow(new TypeError(`timeoutMs must be a number of milliseconds from 1 to 2147483647 (got ${timeoutMs})`));
    }
    expect(() => clientOf(platform.url, { tokenSkewSeconds: Number.NaN })).toThrow(/tokenSkewSeconds must be a number >= 0/);
    for (const maxResponseBytes of [-5, 0, 0.5]) {
      expect(() => clientOf(platform.url, { maxResponseBytes })).toThrow(new TypeError(`maxResponseBytes must be a whole number >= 1 (got ${maxResponseBytes})`));
    }
    // What TypeScript types, checked for a JavaScript caller too.
    const wrongKinds: Array<[Record<string, unknown>, string]> = [
      [{ tokenEndpoint: 'jwt' }, `tokenEndpoint must be 'form' or 'basic' (got "jwt")`],
      [{ fetch: 'nope' }, 'fetch must be a function (got string)'],
      [{ observe: 5 }, 'observe must be a function (got number)'],
      [{ scope: ['a'] }, 'scope must be a string (got object)'],
      [{ signal: {} }, 'signal must be an AbortSignal'],
    ];
    for (const [wrong, message] of wrongKinds) expect(() => clientOf(platform.url, wrong as object)).toThrow(new TypeError(message));
    // null is as not given (`signal: x ?? null`), as before these checks.
    expect(clientOf(platform.url, { signal: null, fetch: null, observe: null } as object)).toBeDefined();
    expect(() => clientOf('https://user:pass@platform.example')).toThrow(/baseUrl must not carry a user name or password/);
    const client = clientOf(platform.url);
    expect(await failureOf(client.GET(SELLERS, { timeoutMs: Number.NaN }))).toEqual(new TypeError('timeoutMs of a call must be a number of milliseconds from 1 to 2147483647 (got NaN)'));
    expect(await failureOf(client.GET(SELLERS, { maxRetries: -1 }))).toEqual(new TypeError('maxRetries of a call must be a number >= 0 (got -1)'));
    expect(platform.requests).toEqual([]);
  });
});

describe('allPaymentLinks', () => {
  it('yields each link once and ends at the total when a server answers the same page again (page ignored)', async () => {
    const links = makeLinks(300);
    let pages = 0;
    const ignoring = await serve((req, res) => {
      if (req.url === TOKEN) return token(res);
      pages += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'x-total-count': '300' }).end(JSON.stringify(links.slice(0, 100)));
    });
    const yielded: Array<{ link_id?: string }> = [];
    for await (const link of clientOf(ignoring.url).allPaymentLinks()) yielded.push(link);
    expect(yielded.map((l) => l.link_id)).toEqual(links.slice(0, 100).map((l) => l.link_id));
    expect(pages).toBe(3);
  });
});
