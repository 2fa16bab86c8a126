// The `fetch` under the typed client: it routes token calls to the token host, adds the access token
// to the operations whose contract security asks for it, answers a 401 with one refresh and one
// retry, retries the transient failures of the operations that are safe to repeat (backoff with full
// jitter, or the platform's Retry-After), bounds every exchange and every call in time, and reports
// each exchange to an observer that never sees a header or a body. The token is added here, as late
// as possible, so no middleware ever holds it.
import { findRoute } from './contract.ts';
import { concatBytes } from './encoding.ts';
import { PlatformConnectionError, PlatformError, type ConnectionFailure } from './errors.ts';
import { isSafeToRetry, RETRIED_STATUSES, retryAfterMs, retryDelayMs, sleep, type RetryTiming } from './retry.ts';
import type { AccessTokenCache } from './token.ts';

/** What the observer learns about one HTTP exchange: never headers, bodies, tokens or secrets. */
export interface RequestObservation {
  /** The contract's operationId, or undefined for a path the contract does not have. */
  operationId: string | undefined;
  method: string;
  /** Full URL, query included (the platform's query parameters carry no secrets). */
  url: string;
  /** 1 for the first exchange of a call, then 2, 3, ... for each retry (the one after a 401 included). */
  attempt: number;
  /** The request carried the platform access token. */
  authenticated: boolean;
  /** HTTP status of the answer; absent when there was none. */
  status?: number;
  /** Name of the failure when there was no answer (`TimeoutError`, `AbortError`, `TypeError`). */
  error?: string;
  durationMs: number;
  /** Present when the client sends the call again: the wait before the next attempt, in milliseconds. */
  retryInMs?: number;
}

export type RequestObserver = (observation: RequestObservation) => void;

export type Fetch = (request: Request) => Promise<Response>;

/** Options of one call, given next to `params` and `body` (`client.GET(path, { params, timeoutMs })`). */
export interface CallOptions {
  /** Aborts this call (every attempt and every wait); the client-wide `signal` still applies. */
  signal?: AbortSignal | undefined;
  /**
   * Time limit of this whole call in milliseconds: its token wait, every attempt and every wait
   * between them. The client-wide `timeoutMs` still bounds each exchange.
   */
  timeoutMs?: number | undefined;
  /** Retries of this call, when its operation is safe to repeat (default: the client's `maxRetries`). */
  maxRetries?: number | undefined;
}

export interface TransportOptions {
  baseUrl: string;
  authUrl: string;
  /** The caller's fetch, given the final `Request`; without it, `globalThis.fetch(url, init)` builds the only one. */
  fetch?: Fetch;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxRetries: number;
  retry: RetryTiming;
  observe?: RequestObserver;
  /** Largest answer body read, in bytes; a larger one fails the call with `response_too_large`. */
  maxResponseBytes: number;
  /** The token cache, or undefined when the client has no credentials. */
  tokens: () => AccessTokenCache | undefined;
}

/**
 * What openapi-fetch builds for a call when no middleware is registered (its `Request` option): the
 * URL and the init, not yet a `Request`. The transport makes the one `Request` of each exchange from
 * them (inside `fetch`, or for the `fetch` option), where openapi-fetch's own `Request` would be
 * copied again by `fetch` (a second Request, headers list and AbortSignal per call). Per-call options
 * (`timeoutMs`, `maxRetries`) travel on it, as openapi-fetch copies the init keys it lacks onto it.
 */
export class PendingRequest {
  readonly url: string;
  readonly method: string;
  readonly init: RequestInit;
  /** The caller's per-call signal, if any (openapi-fetch leaves it on the init). */
  readonly signal: AbortSignal | undefined;
  // Declared only: an own property would stop openapi-fetch from copying the per-call option on.
  declare timeoutMs?: unknown;
  declare maxRetries?: unknown;

  constructor(url: string, init: RequestInit) {
    this.url = url;
    this.init = init;
    this.method = init.method ?? 'GET';
    this.signal = init.signal ?? undefined;
  }
}

/**
 * What the client's call wrapper learns from the transport: how many exchanges the call made before
 * its answer, for a failure that happens after (its body read by openapi-fetch).
 */
export interface CallRecord {
  attempts: number;
  /** The signals that end the call: the caller's and the client's joined, and the call's deadline. */
  callSignal?: AbortSignal | undefined;
  deadline?: AbortSignal | undefined;
}

/**
 * How a call's CallRecord reaches the transport. Through the init under this key when the call runs
 * middleware (openapi-fetch carries it like the per-call options); otherwise handed over (`handOver`)
 * just before openapi-fetch is called, which, with no middleware to await, calls the transport before
 * it returns: the transport takes it first thing. Copying the init to add the key costs ~6 µs a call.
 */
export const CALL_RECORD = 'platformCallRecord';
let handedOver: CallRecord | undefined;

/** Sets (or, with undefined, clears) the CallRecord the next transport call takes. */
export function handOver(record: CallRecord | undefined): void {
  handedOver = record;
}

/** Per-call options travel on the Request: openapi-fetch copies init keys a Request lacks onto it. */
type CarriedOptions = { timeoutMs?: unknown; maxRetries?: unknown; [CALL_RECORD]?: CallRecord; [CALL_SIGNAL]?: AbortSignal };

/** The caller's per-call signal on a Request a middleware made (client.ts carryOptions): it may have dropped its own. */
export const CALL_SIGNAL = 'platformCallSignal';

/** A body that can be given to fetch again for a retry as it is (a stream cannot). */
function reusableBody(body: unknown): boolean {
  return (
    typeof body === 'string' ||
    body instanceof Blob ||
    body instanceof FormData ||
    body instanceof URLSearchParams ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body)
  );
}

/** The signals that are set, as one signal: AbortSignal.any only to join two or more (a signal costs microseconds). */
function oneSignal(a: AbortSignal | undefined, b: AbortSignal | undefined, c?: AbortSignal): AbortSignal | undefined {
  if (!a) return !b ? c : !c ? b : joined([b, c]);
  if (!b && !c) return a;
  return joined(!b ? [a, c!] : !c ? [a, b] : [a, b, c]);
}

const SOURCES = Symbol('the signals joined');

/**
 * AbortSignal.any holding its sources: on Node 20 it holds them weakly, and an AbortSignal.timeout
 * held by nothing else could be garbage-collected with its timer, so that a call to a server that
 * never answers never ended (nodejs/node#57736). The joined signal lives as long as the exchange
 * that uses it, and its sources with it; both go when the call is done.
 */
function joined(signals: AbortSignal[]): AbortSignal {
  const signal = AbortSignal.any(signals);
  (signal as unknown as Record<symbol, unknown>)[SOURCES] = signals;
  return signal;
}

/** The longest time a timer can wait (a longer one would fire at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** A time limit option: absent, or milliseconds from 1 to MAX_TIMEOUT_MS; anything else is a TypeError. */
export function milliseconds(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new TypeError(`${name} must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS} (got ${String(value)})`);
  }
  return value;
}

/** A retry count option: absent, or a number >= 0 (floored); anything else is a TypeError. */
export function retryCount(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0 (got ${String(value)})`);
  return Math.floor(value);
}

/** Statuses whose answer has no body (fetch gives none, and a Response cannot be made with one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Ends an answer's body that will not be read; an answer already failed (aborted) has nothing to end. */
const discard = (response: Response) => response.body?.cancel().catch(() => undefined);

function tooLarge(operationId: string | undefined, status: number, limit: number): PlatformError {
  return new PlatformError(
    { operationId, status, code: 'response_too_large', platformMessage: undefined },
    `${operationId ?? 'request'} answered ${status} with a body over ${limit} bytes (the client's maxResponseBytes); it was not read`,
  );
}

/**
 * Whether an answer's body must be read here to bound it: one that declares its length is left to
 * openapi-fetch (fetch reads no more than it declares; making a second Response of it would cost
 * ~40 µs a call), or refused unread when that is over the limit.
 */
function unbounded(response: Response, limit: number, operationId: string | undefined): boolean {
  const { status } = response;
  if (response.body === null || NULL_BODY_STATUSES.has(status) || status < 200 || status > 599) return false;
  const declared = response.headers.get('content-length');
  if (declared === null || !/^\d+$/.test(declared)) return true;
  // A compressed body's length is not what fetch hands on: 100 bytes of brotli can decode to 48 MiB.
  const encoding = response.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') return true;
  if (Number(declared) <= limit) return false;
  void discard(response);
  throw tooLarge(operationId, status, limit);
}

/**
 * A body without a length (chunked) or compressed, read here and counted, within the exchange's time limit and
 * signal (they bound the body too): a failure while reading it is the exchange's failure, retried
 * like one. The answer is given back as a Response of the bytes read.
 */
async function counted(response: Response, limit: number, operationId: string | undefined): Promise<Response> {
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(operationId, response.status, limit);
    }
    chunks.push(value);
  }
  const whole = new Response(concatBytes(chunks, size).buffer as ArrayBuffer, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(whole, 'url', { value: response.url });
  return whole;
}

/** A failure without an answer that another attempt may cure: the network, or one exchange's timeout. */
function transient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TypeError' || error.name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code);
}

export function connectionFailure(error: unknown, callSignal: AbortSignal | undefined, deadline: AbortSignal | undefined): ConnectionFailure {
  if (deadline?.aborted) return 'timeout';
  if (callSignal?.aborted) return 'aborted';
  return error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'connection_error';
}

/** The transport takes openapi-fetch's `PendingRequest`, or a real `Request` when middleware needs one. */
export type TransportFetch = (request: Request | PendingRequest) => Promise<Response>;

/** What a call throws when it ends without an answer (a PlatformError as it is). */
function callFailure(operationId: string | undefined, error: unknown, attempts: number, callSignal: AbortSignal | undefined, deadline: AbortSignal | undefined): Error {
  if (error instanceof PlatformError) return error;
  return new PlatformConnectionError(operationId, connectionFailure(error, callSignal, deadline), attempts, error);
}

/** One exchange to the observer; a failing observer (a logger) must never fail a payment call. */
function report(
  observe: RequestObserver | undefined,
  exchange: { operationId: string | undefined; method: string; url: string; attempt: number; authenticated: boolean; started: number },
  outcome: { status?: number; error?: string },
  retryInMs?: number,
): void {
  if (!observe) return;
  try {
    const { operationId, method, url, attempt, authenticated, started } = exchange;
    const observation: RequestObservation = { operationId, method, url, attempt, authenticated, ...outcome, durationMs: performance.now() - started };
    if (retryInMs !== undefined) observation.retryInMs = retryInMs;
    observe(observation);
  } catch {
    // Ignored: see above.
  }
}

/** The origin and path prefix of `url` is the client's `baseUrl`: the only place the access token goes. */
const underBase = (url: string, baseUrl: string) => url.startsWith(`${baseUrl}/`);

export function platformTransport(options: TransportOptions): TransportFetch {
  const { baseUrl, authUrl, timeoutMs, observe, maxResponseBytes } = options;
  // Redirects are never followed: the platform answers none to an API call, and a followed one
  // would carry a client secret, a token or a payment's body to wherever `Location` says.
  const send = (url: string, init: RequestInit): Promise<Response> =>
    options.fetch ? options.fetch(new Request(url, init)) : globalThis.fetch(url, init);

  return async (request) => {
    // Taken before anything else: a token request this call makes runs the transport again.
    const carried = request as CarriedOptions;
    const record = carried[CALL_RECORD] ?? handedOver;
    handedOver = undefined;
    // The URL as a Request normalizes it (what is sent and what the observer sees).
    const parsed = new URL(request.url);
    const route = findRoute(request.method, parsed.pathname);
    const operationId = route?.operationId;
    // Token paths sit on the token host (path-level `servers` with `{auth_url}` in the contract).
    const url = route?.host === 'auth' && parsed.href.startsWith(baseUrl) ? authUrl + parsed.href.slice(baseUrl.length) : parsed.href;
    const callTimeoutMs = milliseconds('timeoutMs of a call', carried.timeoutMs);
    const callRetries = retryCount('maxRetries of a call', carried.maxRetries);
    const maxRetries = isSafeToRetry(request.method, route) ? (callRetries ?? options.maxRetries) : 0;

    // The call's own end: the caller's signal, the client-wide signal, the call's deadline. None of
    // them is created when none is set (a plain call makes no AbortSignal of its own).
    const deadline = callTimeoutMs === undefined ? undefined : AbortSignal.timeout(callTimeoutMs);
    // A middleware's new Request may lack the caller's signal: the one carried over joins its own.
    const given = carried[CALL_SIGNAL];
    const callerSignal = given && given !== request.signal ? oneSignal(given, request.signal ?? undefined) : (request.signal ?? undefined);
    const callSignal = oneSignal(callerSignal, options.signal, deadline);
    if (callSignal?.aborted) throw callFailure(operationId, callSignal.reason, 0, callSignal, deadline);

    // The init of every exchange, made once: the headers are this call's own copy (the token is
    // written on them, never on a Request a middleware holds), the body is read once when it could
    // not be sent twice (a retry needs it again).
    let init: RequestInit;
    if (request instanceof PendingRequest) {
      init = request.init;
      if (init.body != null && !reusableBody(init.body)) init.body = await new Response(init.body as BodyInit).arrayBuffer();
    } else {
      const body = request.body ? await request.arrayBuffer() : undefined;
      init = { method: request.method, headers: new Headers(request.headers), body };
    }
    init.redirect = 'manual';
    const headers = init.headers as Headers;

    let tokens: AccessTokenCache | undefined;
    if (route?.bearer) {
      tokens = options.tokens();
      if (!tokens) {
        throw new PlatformError(
          { operationId, status: undefined, code: 'missing_credentials', platformMessage: undefined },
          `${operationId} needs an access token: give createPlatformClient a clientId and a clientSecret`,
        );
      }
      if (!underBase(url, baseUrl)) {
        throw new PlatformError(
          { operationId, status: undefined, code: 'foreign_host', platformMessage: undefined },
          `${operationId} was to be sent to ${parsed.origin}, which is not under the client's baseUrl ${new URL(baseUrl).origin}: the access token is only ever sent there`,
        );
      }
    }

    let token: string | undefined;
    let refreshed = false;
    let retries = 0;
    // A failure without an answer, or while reading it: another attempt when the operation is safe
    // to repeat and the failure may pass (resolves after the wait), else the call's failure (throws).
    type Exchange = Parameters<typeof report>[1];
    // The wait before a retry, counted; an abort or the deadline during it is the call's failure.
    const pause = (wait: number, attempt: number): Promise<void> => {
      retries += 1;
      return sleep(wait, callSignal).catch((e: unknown) => {
        throw callFailure(operationId, e, attempt, callSignal, deadline);
      });
    };
    const failed = async (error: unknown, exchange: Exchange): Promise<void> => {
      const again = !callSignal?.aborted && transient(error) && retries < maxRetries;
      const wait = again ? retryDelayMs(retries + 1, undefined, options.retry) : undefined;
      report(observe, exchange, { error: error instanceof Error ? error.name : 'Error' }, wait);
      if (wait === undefined) throw callFailure(operationId, error, exchange.attempt, callSignal, deadline);
      await pause(wait, exchange.attempt);
    };
    for (let attempt = 1; ; attempt++) {
      if (tokens && token === undefined) token = tokens.cached() ?? (await tokens.get(callSignal).catch((e: unknown) => {
        throw callFailure(operationId, e, attempt - 1, callSignal, deadline);
      }));
      // Each exchange's own time limit, when the client has one.
      init.signal = timeoutMs ? oneSignal(callSignal, AbortSignal.timeout(timeoutMs)) : callSignal;
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
      // Plain data, not a closure per exchange: what the observer is told about this exchange.
      const exchange = { operationId, method: request.method, url, attempt, authenticated: token !== undefined, started: performance.now() };

      let response: Response;
      try {
        response = await send(url, init);
      } catch (error) {
        await failed(error, exchange);
        continue;
      }

      if (response.status === 401 && tokens && !refreshed) {
        // Refresh once and send once more: a second 401 is the answer, never a loop.
        report(observe, exchange, { status: 401 }, 0);
        await discard(response);
        refreshed = true;
        token = await tokens.refresh(token!, callSignal).catch((e: unknown) => {
          throw callFailure(operationId, e, attempt, callSignal, deadline);
        });
        continue;
      }

      if (RETRIED_STATUSES.has(response.status) && retries < maxRetries && !callSignal?.aborted) {
        const wait = retryDelayMs(retries + 1, retryAfterMs(response.headers.get('retry-after')), options.retry);
        if (wait !== undefined) {
          report(observe, exchange, { status: response.status }, wait);
          await discard(response);
          await pause(wait, attempt);
          continue;
        }
      }

      try {
        if (unbounded(response, maxResponseBytes, operationId)) response = await counted(response, maxResponseBytes, operationId);
      } catch (error) {
        await failed(error, exchange);
        continue;
      }
      report(observe, exchange, { status: response.status });
      if (record) {
        record.attempts = attempt;
        record.callSignal = callSignal;
        record.deadline = deadline;
      }
      return response;
    }
  };
}
