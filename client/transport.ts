// The `fetch` under the typed client: it routes token calls to the token host, adds the access token
// to the operations whose contract security asks for it, answers a 401 with one refresh and one
// retry, bounds every HTTP exchange in time and reports each one to an observer that never sees a
// header or a body. The token is added here, as late as possible, so no middleware ever holds it.
import { findRoute } from './contract.ts';
import type { AccessTokenCache } from './token.ts';

/** What the observer learns about one HTTP exchange: never headers, bodies, tokens or secrets. */
export interface RequestObservation {
  /** The contract's operationId, or undefined for a path the contract does not have. */
  operationId: string | undefined;
  method: string;
  /** Full URL, query included (the platform's query parameters carry no secrets). */
  url: string;
  /** 1, or 2 for the one retry after a 401. */
  attempt: 1 | 2;
  /** The request carried the platform access token. */
  authenticated: boolean;
  /** HTTP status of the answer; absent when there was none. */
  status?: number;
  /** Name of the failure when there was no answer (`TimeoutError`, `AbortError`, `TypeError`). */
  error?: string;
  durationMs: number;
}

export type RequestObserver = (observation: RequestObservation) => void;

export type Fetch = (request: Request) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string;
  authUrl: string;
  fetch: Fetch;
  timeoutMs?: number;
  observe?: RequestObserver;
  /** The token cache, or undefined when the client has no credentials. */
  tokens: () => AccessTokenCache | undefined;
}

/** One call as sent (and sent again after a 401): the body is read once, up front. */
interface Attempt {
  request: Request;
  url: string;
  body: ArrayBuffer | undefined;
  operationId: string | undefined;
}

export function platformTransport(options: TransportOptions): Fetch {
  const { baseUrl, authUrl, timeoutMs, observe } = options;

  const send = async ({ request, url, body, operationId }: Attempt, token: string | undefined, attempt: 1 | 2) => {
    const headers = new Headers(request.headers);
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
    const signal = timeoutMs ? AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) : request.signal;
    const outgoing = new Request(url, { method: request.method, headers, body, signal, redirect: request.redirect });
    const started = performance.now();
    const report = (outcome: { status?: number; error?: string }) => {
      if (!observe) return;
      try {
        const durationMs = performance.now() - started;
        observe({ operationId, method: request.method, url, attempt, authenticated: token !== undefined, ...outcome, durationMs });
      } catch {
        // A failing observer (a logger) must never fail a payment call.
      }
    };
    try {
      const response = await options.fetch(outgoing);
      report({ status: response.status });
      return response;
    } catch (error) {
      report({ error: error instanceof Error ? error.name : 'Error' });
      throw error;
    }
  };

  return async (request) => {
    const route = findRoute(request.method, new URL(request.url).pathname);
    // Token paths sit on the token host (path-level `servers` with `{auth_url}` in the contract).
    const url = route?.host === 'auth' && request.url.startsWith(baseUrl) ? authUrl + request.url.slice(baseUrl.length) : request.url;
    // Read once: a retry needs the body again, and a Request body can be read only once.
    const body = request.body ? await request.arrayBuffer() : undefined;
    const call: Attempt = { request, url, body, operationId: route?.operationId };
    if (!route?.bearer) return send(call, undefined, 1);

    const tokens = options.tokens();
    if (!tokens) throw new Error(`${route.operationId} needs an access token: give createPlatformClient a clientId and a clientSecret`);
    const token = await tokens.get();
    const first = await send(call, token, 1);
    if (first.status !== 401) return first;
    // Refresh once and retry once: a second 401 is the answer, never a loop.
    await first.body?.cancel();
    return send(call, await tokens.refresh(token), 2);
  };
}
