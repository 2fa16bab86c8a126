// A platform double on 127.0.0.1 that fails on demand: for each path, a queue of failures (a status
// with its body and Retry-After, or a dropped connection) served before the real answer. It records
// every request (method, path, query, body), issues tokens, serves the seller, payment intents,
// subscription events (idempotent on idempotency_key, as the contract says) and a paged payment link
// list with X-Total-Count.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Failure = { status: number; retryAfter?: string; body?: unknown } | 'drop';

export interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  body: string;
  authorization: string | undefined;
}

export interface FlakyServer {
  url: string;
  requests: Seen[];
  /** Failures served, in order, before the real answer of each path. */
  failures: Map<string, Failure[]>;
  fail(path: string, ...failures: Failure[]): void;
  /** Payment links of the list, in list order. */
  links: Array<{ link_id: string; short_id: string; label: string; status: 'ACTIVE' | 'INACTIVE' }>;
  /** Delay before the real answer, in milliseconds. */
  delayMs: number;
  /** Events applied (by idempotency key), to prove a retried PATCH had one effect. */
  appliedEvents: Map<string, string>;
  /** Called with each request as it arrives, before it is answered (to act while it is in flight). */
  onRequest: ((seen: Seen) => void) | undefined;
  close(): Promise<void>;
}

const TOKEN_PATHS = ['/authentication/oauth2/-core/access_token', '/authentication/oauth2/access_token'];
export const SELLER = { seller_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', trade_name: 'Café da Montanha', country: 'BR' };

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

export function makeLinks(count: number, status: (i: number) => 'ACTIVE' | 'INACTIVE' = () => 'ACTIVE'): FlakyServer['links'] {
  return Array.from({ length: count }, (_, i) => ({
    link_id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
    short_id: `L${String(i + 1).padStart(7, '0')}`,
    label: `link ${i + 1}`,
    status: status(i),
  }));
}

export async function startFlakyServer(): Promise<FlakyServer> {
  let tokens = 0;
  const state = {
    requests: [] as Seen[],
    failures: new Map<string, Failure[]>(),
    links: [] as FlakyServer['links'],
    delayMs: 0,
    appliedEvents: new Map<string, string>(),
    onRequest: undefined as FlakyServer['onRequest'],
  };

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const seen: Seen = { method: req.method ?? '', path, query: Object.fromEntries(url.searchParams), body: await bodyOf(req), authorization: req.headers.authorization };
    state.requests.push(seen);
    state.onRequest?.(seen);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };

    const failure = state.failures.get(path)?.shift();
    if (failure === 'drop') {
      // The connection closes without an answer: fetch rejects with a TypeError.
      req.socket.destroy();
      return;
    }
    if (failure) {
      return json(failure.status, failure.body ?? { error_code: 'service_unavailable', message: 'Service unavailable', status_code: failure.status }, failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter });
    }
    if (state.delayMs) await new Promise((resolve) => setTimeout(resolve, state.delayMs));

    if (TOKEN_PATHS.includes(path)) {
      return json(200, { access_token: `tok-${++tokens}`, token_type: 'Bearer', expires_in: 3599, scope: 'digital-plataform:gateway-api' });
    }
    if (!seen.authorization?.startsWith('Bearer tok-')) return json(401, { error_code: 'unauthorized', message: 'Unauthorized', status_code: 401 });
    if (path === '/dpy/payment-link/v1/sellers') return json(200, SELLER);
    if (path === '/dpy/payment-link/v1/payment-links' && req.method === 'GET') {
      const limit = Number(url.searchParams.get('limit') ?? 10);
      const page = Number(url.searchParams.get('page') ?? 1);
      const status = url.searchParams.get('status');
      const matching = state.links.filter((l) => !status || l.status === status);
      return json(200, matching.slice((page - 1) * limit, page * limit), { 'x-total-count': String(matching.length) });
    }
    if (path === '/dpy/web-checkout/v1/payment-intent') return json(201, { payment_intent_id: 'cb6fbaee-fa77-4e8f-846f-0dbda16eeb57', redirect_url: 'http://x/checkout/1' });
    if (path.startsWith('/dpm/webhooks/v1/subscriptions/')) {
      const event = JSON.parse(seen.body) as { idempotency_key: string; status: string };
      if (!state.appliedEvents.has(event.idempotency_key)) state.appliedEvents.set(event.idempotency_key, event.status);
      return json(200, { event_name: 'payment', idempotency_key: event.idempotency_key, status: state.appliedEvents.get(event.idempotency_key) });
    }
    return json(404, { error_code: 'not_found', message: 'Not found', status_code: 404 });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    fail(path: string, ...failures: Failure[]) {
      state.failures.set(path, [...(state.failures.get(path) ?? []), ...failures]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
