// One typed client for every area of the platform. Path keys carry each area's full base path, so
// one `baseUrl` serves them all; the token endpoints go to `authUrl`.
import createClient, { mergeHeaders, type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from '@payment-platform/contract/types';
import { findRoute, platformRoutes } from './contract.ts';
import { PlatformApiError, PlatformError } from './errors.ts';
import { paymentLinkPages, type PaymentLinkPages } from './pagination.ts';
import { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_BASE_DELAY_MS, DEFAULT_RETRY_MAX_DELAY_MS, retryAfterMs } from './retry.ts';
import {
  createAccessTokenCache,
  DEFAULT_SCOPE,
  requestAccessToken,
  type AccessTokenCache,
  type TokenEndpointForm,
} from './token.ts';
import { PendingRequest, platformTransport, type CallOptions, type Fetch, type RequestObserver } from './transport.ts';

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
}

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
  if (url.search || url.hash) throw new TypeError(`${name} must be a host (and path prefix), without query or fragment`);
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

/**
 * What openapi-fetch throws when a 2xx answer's body is not JSON (a proxy's HTML page): a
 * PlatformError with the code `invalid_response`, as every error the client throws is one.
 */
function unreadableAnswer(method: string, path: string, error: unknown): unknown {
  if (!(error instanceof SyntaxError)) return error;
  const operationId = findRoute(method, path)?.operationId;
  return new PlatformError(
    { operationId, status: undefined, code: 'invalid_response', platformMessage: undefined },
    `${operationId ?? 'request'} failed, invalid_response: its answer was 2xx but its body is not JSON (${error.message})`,
    { cause: error },
  );
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0`);
  return value;
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const baseUrl = hostUrl('baseUrl', options.baseUrl);
  const authUrl = hostUrl('authUrl', options.authUrl ?? options.baseUrl);
  let tokens: AccessTokenCache | undefined;
  const transport = platformTransport({
    baseUrl,
    authUrl,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxRetries: Math.floor(nonNegative('maxRetries', options.maxRetries, DEFAULT_MAX_RETRIES)),
    retry: {
      baseDelayMs: nonNegative('retryBaseDelayMs', options.retryBaseDelayMs, DEFAULT_RETRY_BASE_DELAY_MS),
      maxDelayMs: nonNegative('retryMaxDelayMs', options.retryMaxDelayMs, DEFAULT_RETRY_MAX_DELAY_MS),
    },
    observe: options.observe,
    tokens: () => tokens,
  });
  const { clientId, clientSecret } = options;
  if (Boolean(clientId) !== Boolean(clientSecret)) throw new TypeError('clientId and clientSecret go together');
  if (clientId && clientSecret) {
    // Token requests use a client of their own, so middleware added to the returned client never
    // sees the client secret.
    const tokenClient = createClient<paths>({ baseUrl, fetch: transport as Fetch, Request: PendingRequest as unknown as typeof Request });
    const credentials = { clientId, clientSecret, scope: options.scope ?? DEFAULT_SCOPE, form: options.tokenEndpoint ?? 'form' };
    tokens = createAccessTokenCache(() => requestAccessToken(tokenClient, credentials), { skewSeconds: options.tokenSkewSeconds });
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
      const init = withContractMediaType(method, path, given);
      return (baseOf(init)[method] as Call)(path, init).then(
        (result) => (result.response.ok ? result : withFailure(method, path, result)),
        (error: unknown) => Promise.reject(unreadableAnswer(method, path, error)),
      );
    };
  }
  client.request = (method: string, path: string, given?: unknown) => {
    const init = withContractMediaType(method.toUpperCase(), path, given);
    return (baseOf(init).request as (method: string, path: string, init?: unknown) => Promise<Result>)(method, path, init).then(
      (result) => withFailure(method.toUpperCase(), path, result),
      (error: unknown) => Promise.reject(unreadableAnswer(method.toUpperCase(), path, error)),
    );
  };
  const platform = client as unknown as PlatformClient;
  Object.assign(platform, paymentLinkPages(platform));
  return platform;
}
