// One typed client for every area of the platform. Path keys carry each area's full base path, so
// one `baseUrl` serves them all; the token endpoints go to `authUrl`.
import createClient, { mergeHeaders, type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from '@payment-platform/contract/types';
import { findRoute, platformRoutes } from './contract.ts';
import { PlatformApiError, PlatformConnectionError, PlatformError } from './errors.ts';
import { paymentLinkPages, type PaymentLinkPages } from './pagination.ts';
import { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_BASE_DELAY_MS, DEFAULT_RETRY_MAX_DELAY_MS, retryAfterMs } from './retry.ts';
import {
  createAccessTokenCache,
  DEFAULT_SCOPE,
  DEFAULT_TOKEN_SKEW_SECONDS,
  requestAccessToken,
  TOKEN_ENDPOINT_FORMS,
  type AccessTokenCache,
  type TokenEndpointForm,
} from './token.ts';
import { CALL_RECORD, CALL_SIGNAL, connectionFailure, handOver, MAX_TIMEOUT_MS, milliseconds, PendingRequest, platformTransport, type CallOptions, type CallRecord, type Fetch, type RequestObserver } from './transport.ts';

export interface PlatformClientOptions {
  /**
   * Platform host of the environment, scheme included (`https://...`). The platform names its SBX,
   * UAT/PRE and PROD environments but the contract carries no hosts: you always give them.
   */
  baseUrl: string;
  /** Token host of the environment; defaults to `baseUrl`. */
  authUrl?: string | undefined;
  /** Client credentials; needed for every operation except the public short-id lookup. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Scope asked by the `form` token endpoint; default `digital-plataform:gateway-api` (the seed's spelling). */
  scope?: string | undefined;
  /** `form` (default): credentials and scope in the form body; `basic`: credentials in a Basic header. */
  tokenEndpoint?: TokenEndpointForm | undefined;
  /** A token is renewed this many seconds before `expires_in` runs out (default 60). */
  tokenSkewSeconds?: number | undefined;
  /** Custom fetch (a proxy agent, a test double); receives the final request. */
  fetch?: Fetch | undefined;
  /** Time limit of each HTTP exchange in milliseconds (token request, call and each retry). */
  timeoutMs?: number | undefined;
  /** Aborts every call of the client (a shutdown); each call may also take its own `signal`. */
  signal?: AbortSignal | undefined;
  /**
   * Retries of an operation that is safe to repeat (GET, token requests, the contract's idempotent
   * updates) after a connection failure, a 429 or a 502/503/504. Default 2; 0 turns retries off.
   * A creation (payment intent, subscription, product image) is never retried.
   */
  maxRetries?: number | undefined;
  /** First backoff ceiling in milliseconds (default 500): retry n waits a random time in [0, base × 2^(n−1)]. */
  retryBaseDelayMs?: number | undefined;
  /** Longest wait before a retry (default 20 000); a longer `Retry-After` returns the answer instead. */
  retryMaxDelayMs?: number | undefined;
  /** Called after each HTTP exchange with its operation, URL, status and duration; never a header or body. */
  observe?: RequestObserver | undefined;
  /** Largest answer body read, in bytes (default 16 MiB); a larger one fails the call with `response_too_large`. */
  maxResponseBytes?: number | undefined;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type RequiredKeysOfHelper<T> = { [K in keyof T]: {} extends Pick<T, K> ? never : K }[keyof T];
type RequiredKeysOf<T> = RequiredKeysOfHelper<T> extends undefined ? never : RequiredKeysOfHelper<T>;
type CallInit<Init> = RequiredKeysOf<Init> extends never
  ? [(Init & CallOptions & { [key: string]: unknown })?]
  : [Init & CallOptions & { [key: string]: unknown }];

/** A call's answer, with `failure` when the status is not 2xx: the error body as a `PlatformApiError`. */
export type PlatformResponse<R> = R extends { error: infer E } ? R & { failure: PlatformApiError<E> } : R & { failure?: undefined };

type Operation<Path extends keyof paths, M extends HttpMethod> = paths[Path][M] extends infer O extends Record<string | number, any> ? O : never;
type PlatformMethod<M extends HttpMethod> = <
  Path extends ClientPathsWithMethod<Client<paths>, M>,
  Init extends MaybeOptionalInit<paths[Path], M>,
>(
  url: Path,
  ...init: CallInit<Init>
) => Promise<PlatformResponse<FetchResponse<Operation<Path, M>, Init, `${string}/${string}`>>>;

/**
 * The openapi-fetch client over the contract's `paths` (`data` and `error` typed per operation),
 * whose calls also take `signal`, `timeoutMs` and `maxRetries` and answer a `failure` on non-2xx,
 * plus the payment link pages and iterator.
 */
export interface PlatformClient extends Omit<Client<paths>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE'>, PaymentLinkPages {
  GET: PlatformMethod<'get'>;
  PUT: PlatformMethod<'put'>;
  POST: PlatformMethod<'post'>;
  DELETE: PlatformMethod<'delete'>;
  OPTIONS: PlatformMethod<'options'>;
  HEAD: PlatformMethod<'head'>;
  PATCH: PlatformMethod<'patch'>;
  TRACE: PlatformMethod<'trace'>;
}

/** A call's `data`, or its `failure` thrown (for code that prefers exceptions). */
export function dataOrThrow<R extends { data?: unknown; failure?: PlatformApiError<unknown> | undefined }>(result: R): NonNullable<R['data']> {
  if (result.failure) throw result.failure;
  return result.data as NonNullable<R['data']>;
}

function hostUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute URL such as https://host.example (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`${name} must be an http(s) URL`);
  if (url.search || url.hash || value.includes('?') || value.includes('#')) throw new TypeError(`${name} must be a host (and path prefix), without query or fragment`);
  // Credentials in the URL would reach error messages and the observer; the client authenticates itself.
  if (url.username || url.password) throw new TypeError(`${name} must not carry a user name or password (the client authenticates with clientId and clientSecret)`);
  // The paths already carry their area's base path: `https://host/dpy/payment-link/v1` would call
  // `/dpy/payment-link/v1/dpy/payment-link/v1/...` and read as a 404 of the token endpoint.
  const prefix = url.pathname.replace(/\/+$/, '');
  const repeated = prefix && platformRoutes().find((route) => route.path.startsWith(`${prefix}/`));
  if (repeated) {
    throw new TypeError(`${name} must be the host (and a gateway's own path prefix, if any), without the platform's base paths: every path already starts with one (drop ${JSON.stringify(prefix)} from ${JSON.stringify(value)})`);
  }
  // Normalized as Request normalizes URLs, so the token host swap can match the prefix.
  return url.href.replace(/\/+$/, '');
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

const FORM = 'application/x-www-form-urlencoded';

/**
 * A call's init with the contract's form media type when its operation takes a form body and no JSON
 * (the token endpoints) and the caller set no `Content-Type`: openapi-fetch would send the body as JSON,
 * which those endpoints refuse. A `Content-Type` the caller gives (even `null`) is left as it is.
 */
function withContractMediaType(method: string, path: string, init: unknown): unknown {
  const given = init as { body?: unknown; headers?: Parameters<typeof mergeHeaders>[0] } | undefined;
  if (given?.body === undefined) return init;
  const types = findRoute(method, path)?.requestMediaTypes;
  if (!types?.includes(FORM) || types.includes('application/json')) return init;
  const headers = given.headers;
  const named =
    headers instanceof Headers
      ? headers.has('content-type')
      : Array.isArray(headers)
        ? headers.some(([name]) => name.toLowerCase() === 'content-type')
        : headers !== undefined && headers !== null && Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  return named ? init : { ...given, headers: mergeHeaders({ 'content-type': FORM }, headers) };
}

/** A failure of fetch while a body is read: the connection cut (`terminated`), a timeout or an abort. */
function bodyReadFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  return error.name === 'TimeoutError' || error.name === 'AbortError' || (error.name === 'TypeError' && error.message === 'terminated');
}

/**
 * What a call throws when openapi-fetch fails after the transport's answer, so that every failure of
 * the platform's answer is a PlatformError: a 2xx body that is not JSON (a proxy's HTML page) is
 * `invalid_response`; a body cut or stalled while openapi-fetch read it is a PlatformConnectionError,
 * after the exchanges `record` counted. Anything else (a middleware's own error) is left as it is.
 */
function afterAnswer(method: string, path: string, error: unknown, record: CallRecord): unknown {
  const operationId = () => findRoute(method, path)?.operationId;
  if (error instanceof SyntaxError) {
    return new PlatformError(
      { operationId: operationId(), status: undefined, code: 'invalid_response', platformMessage: undefined },
      `${operationId() ?? 'request'} failed, invalid_response: its answer was 2xx but its body is not JSON (${error.message})`,
      { cause: error },
    );
  }
  if (!(error instanceof PlatformError) && bodyReadFailure(error)) {
    // Without a record (openapi-fetch changed how it calls the transport), one exchange and the error's own name.
    if (record.attempts === 0) return new PlatformConnectionError(operationId(), error.name === 'AbortError' ? 'aborted' : connectionFailure(error, undefined, undefined), 1, error);
    return new PlatformConnectionError(operationId(), connectionFailure(error, record.callSignal, record.deadline), record.attempts, error);
  }
  return error;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0`);
  return value;
}

function wholePositive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a whole number >= 1 (got ${String(value)})`);
  return value;
}

/** The options TypeScript types but a JavaScript caller may still get wrong: each checked when the client is made. */
function checkKinds(options: PlatformClientOptions): void {
  const given = options as unknown as Record<string, unknown>;
  // null is taken as not given, as it always was (`signal: x ?? null`).
  for (const name of ['fetch', 'observe'] as const) {
    if (given[name] != null && typeof given[name] !== 'function') throw new TypeError(`${name} must be a function (got ${typeof given[name]})`);
  }
  for (const name of ['clientId', 'clientSecret', 'scope'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'string') throw new TypeError(`${name} must be a string (got ${typeof given[name]})`);
  }
  if (given.tokenEndpoint !== undefined && !TOKEN_ENDPOINT_FORMS.includes(given.tokenEndpoint as TokenEndpointForm)) {
    throw new TypeError(`tokenEndpoint must be ${TOKEN_ENDPOINT_FORMS.map((form) => `'${form}'`).join(' or ')} (got ${JSON.stringify(given.tokenEndpoint)})`);
  }
  const signal = given.signal as { aborted?: unknown; addEventListener?: unknown } | null | undefined;
  if (signal != null && (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    throw new TypeError('signal must be an AbortSignal');
  }
}

/** The per-call options the transport reads on a Request (openapi-fetch copies them onto its own). */
const CARRIED = ['timeoutMs', 'maxRetries', CALL_RECORD] as const;

/**
 * The last middleware of a call that runs middleware: a middleware may return a new Request, which
 * lacks the per-call options openapi-fetch copied onto the first one; they are copied onto it again,
 * so that `timeoutMs`, `maxRetries`, the call's `signal` and its record still reach the transport.
 */
function carryOptions(init: Record<string, unknown>) {
  return {
    onRequest({ request }: { request: Request }) {
      const target = request as unknown as Record<string, unknown>;
      for (const key of CARRIED) if (init[key] !== undefined && !(key in target)) target[key] = init[key];
      if (init.signal) target[CALL_SIGNAL] = init.signal; // a new Request may have been made without it
      return undefined;
    },
  };
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  checkKinds(options);
  const baseUrl = hostUrl('baseUrl', options.baseUrl);
  const authUrl = hostUrl('authUrl', options.authUrl ?? options.baseUrl);
  let tokens: AccessTokenCache | undefined;
  const transport = platformTransport({
    baseUrl,
    authUrl,
    fetch: options.fetch,
    timeoutMs: milliseconds('timeoutMs', options.timeoutMs),
    signal: options.signal,
    maxRetries: Math.floor(nonNegative('maxRetries', options.maxRetries, DEFAULT_MAX_RETRIES)),
    retry: {
      baseDelayMs: nonNegative('retryBaseDelayMs', options.retryBaseDelayMs, DEFAULT_RETRY_BASE_DELAY_MS),
      maxDelayMs: Math.min(nonNegative('retryMaxDelayMs', options.retryMaxDelayMs, DEFAULT_RETRY_MAX_DELAY_MS), MAX_TIMEOUT_MS),
    },
    observe: options.observe,
    maxResponseBytes: wholePositive('maxResponseBytes', options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES),
    tokens: () => tokens,
  });
  const { clientId, clientSecret } = options;
  if (Boolean(clientId) !== Boolean(clientSecret)) throw new TypeError('clientId and clientSecret go together');
  if (clientId && clientSecret) {
    // Token requests use a client of their own, so middleware added to the returned client never
    // sees the client secret.
    const tokenClient = createClient<paths>({ baseUrl, fetch: transport as Fetch, Request: PendingRequest as unknown as typeof Request });
    const credentials = { clientId, clientSecret, scope: options.scope ?? DEFAULT_SCOPE, form: options.tokenEndpoint ?? 'form' };
    const skewSeconds = nonNegative('tokenSkewSeconds', options.tokenSkewSeconds, DEFAULT_TOKEN_SKEW_SECONDS);
    tokens = createAccessTokenCache((signal) => requestAccessToken(tokenClient, credentials, signal), { skewSeconds });
  }

  // Two openapi-fetch clients over the same transport: `pending` hands the transport the URL and init
  // of a call (PendingRequest) so that the only Request of an exchange is the one fetch builds;
  // `withRequests` builds openapi-fetch's own Request, for the calls that run middleware (registered
  // with `use`, or given per call), since a middleware receives and may return a real Request.
  const pending = createClient<paths>({ baseUrl, fetch: transport as Fetch, Request: PendingRequest as unknown as typeof Request });
  const withRequests = createClient<paths>({ baseUrl, fetch: transport as Fetch });
  const registered: unknown[] = [];
  const baseOf = (init: unknown) => (registered.length > 0 || (init as { middleware?: unknown[] } | undefined)?.middleware?.length ? withRequests : pending);
  type Result = { error?: unknown; response: Response; failure?: PlatformApiError };
  /** Runs a call of openapi-fetch with its CallRecord reaching the transport (see CALL_RECORD). */
  const recorded = (init: unknown, record: CallRecord, call: (base: typeof pending, init: unknown) => Promise<Result>): Promise<Result> => {
    const base = baseOf(init);
    if (base !== pending) {
      const carried: Record<string, unknown> & { middleware?: unknown[] } = { ...(init as object), [CALL_RECORD]: record };
      carried.middleware = [...(carried.middleware ?? []), carryOptions(carried)];
      return call(base, carried);
    }
    handOver(record);
    try {
      return call(base, init);
    } finally {
      handOver(undefined);
    }
  };
  type Call = (path: string, init?: unknown) => Promise<Result>;
  // A non-2xx answer also gets its `failure`: the error body with the operationId, status and code.
  const withFailure = (method: string, path: string, result: Result): Result => {
    const { response } = result;
    if (!response.ok) {
      const operationId = findRoute(method, path)?.operationId;
      result.failure = new PlatformApiError(operationId, response.status, result.error, retryAfterMs(response.headers.get('retry-after')));
    }
    return result;
  };
  const client = { ...withRequests } as Record<string, unknown>;
  client.use = (...middleware: Parameters<typeof withRequests.use>) => {
    withRequests.use(...middleware);
    for (const m of middleware) if (m) registered.push(m);
  };
  client.eject = (...middleware: Parameters<typeof withRequests.eject>) => {
    withRequests.eject(...middleware);
    for (const m of middleware) {
      const i = registered.indexOf(m);
      if (i !== -1) registered.splice(i, 1);
    }
  };
  for (const method of METHODS) {
    // `then` rather than an async wrapper: one promise less on every call.
    client[method] = (path: string, given?: unknown) => {
      const record: CallRecord = { attempts: 0 };
      return recorded(withContractMediaType(method, path, given), record, (base, init) => (base[method] as Call)(path, init)).then(
        (result) => (result.response.ok ? result : withFailure(method, path, result)),
        (error: unknown) => Promise.reject(afterAnswer(method, path, error, record)),
      );
    };
  }
  client.request = (method: string, path: string, given?: unknown) => {
    const record: CallRecord = { attempts: 0 };
    type Request = (method: string, path: string, init?: unknown) => Promise<Result>;
    return recorded(withContractMediaType(method.toUpperCase(), path, given), record, (base, init) => (base.request as Request)(method, path, init)).then(
      (result) => withFailure(method.toUpperCase(), path, result),
      (error: unknown) => Promise.reject(afterAnswer(method.toUpperCase(), path, error, record)),
    );
  };
  const platform = client as unknown as PlatformClient;
  Object.assign(platform, paymentLinkPages(platform));
  return platform;
}
