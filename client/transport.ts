// The `fetch` under the typed client: it routes token calls to the token host, adds the access token
// to the operations whose contract security asks for it, answers a 401 with one refresh and one
// retry, retries the transient failures of the operations that are safe to repeat (backoff with full
// jitter, or the platform's Retry-After), bounds every exchange and every call in time, and reports
// each exchange to an observer that never sees a header or a body. The token is added here, as late
// as possible, so no middleware ever holds it.
import { findRoute } from './contract.ts';
import { PlatformConnectionError, PlatformError, type ConnectionFailure } from './errors.ts';
import { abortable, isSafeToRetry, RETRIED_STATUSES, retryAfterMs, retryDelayMs, sleep, type RetryTiming } from './retry.ts';
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
  signal?: AbortSignal;
  /**
   * Time limit of this whole call in milliseconds: its token wait, every attempt and every wait
   * between them. The client-wide `timeoutMs` still bounds each exchange.
   */
  timeoutMs?: number;
  /** Retries of this call, when its operation is safe to repeat (default: the client's `maxRetries`). */
  maxRetries?: number;
}

export interface TransportOptions {
  baseUrl: string;
  authUrl: string;
  fetch: Fetch;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxRetries: number;
  retry: RetryTiming;
  observe?: RequestObserver;
  /** The token cache, or undefined when the client has no credentials. */
  tokens: () => AccessTokenCache | undefined;
}

/** Per-call options travel on the Request: openapi-fetch copies init keys a Request lacks onto it. */
type CarriedOptions = Request & { timeoutMs?: unknown; maxRetries?: unknown };

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;

/** A failure without an answer that another attempt may cure: the network, or one exchange's timeout. */
function transient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TypeError' || error.name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code);
}

function connectionFailure(error: unknown, callSignal: AbortSignal | undefined, deadline: AbortSignal | undefined): ConnectionFailure {
  if (deadline?.aborted) return 'timeout';
  if (callSignal?.aborted) return 'aborted';
  return error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'connection_error';
}

export function platformTransport(options: TransportOptions): Fetch {
  const { baseUrl, authUrl, timeoutMs, observe } = options;

  return async (request) => {
    const route = findRoute(request.method, new URL(request.url).pathname);
    const operationId = route?.operationId;
    // Token paths sit on the token host (path-level `servers` with `{auth_url}` in the contract).
    const url = route?.host === 'auth' && request.url.startsWith(baseUrl) ? authUrl + request.url.slice(baseUrl.length) : request.url;
    const carried = request as CarriedOptions;
    const callTimeoutMs = count(carried.timeoutMs);
    const maxRetries = isSafeToRetry(request.method, route) ? (count(carried.maxRetries) ?? options.maxRetries) : 0;

    // The call's own end: the caller's signal, the client-wide signal, the call's deadline.
    const deadline = callTimeoutMs === undefined ? undefined : AbortSignal.timeout(callTimeoutMs);
    let callSignal = request.signal;
    if (options.signal || deadline) callSignal = AbortSignal.any([request.signal, options.signal, deadline].filter((s): s is AbortSignal => s !== undefined));
    const fail = (error: unknown, attempts: number): never => {
      if (error instanceof PlatformError) throw error;
      throw new PlatformConnectionError(operationId, connectionFailure(error, callSignal, deadline), attempts, error);
    };

    // Read once: a retry needs the body again, and a Request body can be read only once.
    const body = request.body ? await request.arrayBuffer() : undefined;

    let tokens: AccessTokenCache | undefined;
    if (route?.bearer) {
      tokens = options.tokens();
      if (!tokens) {
        throw new PlatformError(
          { operationId, status: undefined, code: 'missing_credentials', platformMessage: undefined },
          `${operationId} needs an access token: give createPlatformClient a clientId and a clientSecret`,
        );
      }
    }

    let token: string | undefined;
    let refreshed = false;
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      if (tokens && token === undefined) token = tokens.cached() ?? (await abortable(tokens.get(), callSignal).catch((e: unknown) => fail(e, attempt - 1)));
      const signal = timeoutMs ? AbortSignal.any([callSignal, AbortSignal.timeout(timeoutMs)]) : callSignal;
      // A request without a body, for the same URL and signal, is sent as openapi-fetch built it
      // (a bodiless Request can be sent again): building another Request costs more than the rest
      // of the call's own work.
      const reusable = body === undefined && url === request.url && signal === request.signal;
      let outgoing: Request;
      if (reusable) {
        outgoing = request;
        if (token !== undefined) outgoing.headers.set('authorization', `Bearer ${token}`);
      } else {
        const headers = new Headers(request.headers);
        if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
        outgoing = new Request(url, { method: request.method, headers, body, signal, redirect: request.redirect });
      }
      const started = performance.now();
      const report = (outcome: { status?: number; error?: string }, retryInMs?: number) => {
        if (!observe) return;
        try {
          const observation: RequestObservation = { operationId, method: request.method, url, attempt, authenticated: token !== undefined, ...outcome, durationMs: performance.now() - started };
          if (retryInMs !== undefined) observation.retryInMs = retryInMs;
          observe(observation);
        } catch {
          // A failing observer (a logger) must never fail a payment call.
        }
      };

      let response: Response;
      try {
        response = await options.fetch(outgoing);
      } catch (error) {
        const again = !callSignal?.aborted && transient(error) && retries < maxRetries;
        const wait = again ? retryDelayMs(retries + 1, undefined, options.retry) : undefined;
        report({ error: error instanceof Error ? error.name : 'Error' }, wait);
        if (wait === undefined) return fail(error, attempt);
        retries += 1;
        await sleep(wait, callSignal).catch((e: unknown) => fail(e, attempt));
        continue;
      }

      if (response.status === 401 && tokens && !refreshed) {
        // Refresh once and send once more: a second 401 is the answer, never a loop.
        report({ status: 401 }, 0);
        await response.body?.cancel();
        refreshed = true;
        const rejected = token!;
        token = await abortable(tokens.refresh(rejected), callSignal).catch((e: unknown) => fail(e, attempt));
        continue;
      }

      if (RETRIED_STATUSES.has(response.status) && retries < maxRetries && !callSignal?.aborted) {
        const wait = retryDelayMs(retries + 1, retryAfterMs(response.headers.get('retry-after')), options.retry);
        if (wait !== undefined) {
          report({ status: response.status }, wait);
          await response.body?.cancel();
          retries += 1;
          await sleep(wait, callSignal).catch((e: unknown) => fail(e, attempt));
          continue;
        }
      }
      report({ status: response.status });
      return response;
    }
  };
}
