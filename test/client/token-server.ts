// A tiny platform for the token tests: both token endpoint forms, counting every token request, and
// a few API paths that accept only tokens it issued and did not revoke, recording what they got.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

export interface TokenServer {
  url: string;
  /** Token requests received, in order. */
  tokenRequests: SeenRequest[];
  /** API requests received, in order. */
  apiRequests: SeenRequest[];
  /** Lifetime given to the next tokens, in seconds. */
  expiresIn: number;
  /** Delay before a token is answered, in milliseconds. */
  tokenDelayMs: number;
  /** When set, the token endpoints answer this status with their form's error body. */
  tokenFailure: 400 | 401 | undefined;
  /** Tokens refused from now on (as if revoked by the platform). */
  revoked: Set<string>;
  /** Paths answered 401 whatever the token. */
  alwaysUnauthorized: Set<string>;
  /** Delay before an API call is answered, in milliseconds. */
  apiDelayMs: number;
  /** Tokens issued (shared with another server to play a separate token host). */
  issued: Set<string>;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startTokenServer(shared: { issued?: Set<string> } = {}): Promise<TokenServer> {
  const issued = shared.issued ?? new Set<string>();
  let counter = 0;
  const state: Omit<TokenServer, 'url' | 'close'> = {
    tokenRequests: [],
    apiRequests: [],
    expiresIn: 3599,
    tokenDelayMs: 20,
    tokenFailure: undefined,
    revoked: new Set(),
    alwaysUnauthorized: new Set(),
    apiDelayMs: 0,
    issued,
  };

  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const seen: SeenRequest = { method: req.method ?? '', path, authorization: req.headers.authorization, body: await bodyOf(req) };
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };

    if (path === '/authentication/oauth2/-core/access_token' || path === '/authentication/oauth2/access_token') {
      state.tokenRequests.push(seen);
      await sleep(state.tokenDelayMs);
      const basicForm = path === '/authentication/oauth2/access_token';
      if (state.tokenFailure) {
        const status = state.tokenFailure;
        return basicForm
          ? json(status, { error: status === 401 ? 'invalid_client' : 'invalid_request', error_description: 'Invalid client credentials' })
          : json(status, { error_code: status === 401 ? 'invalid_credentials' : 'invalid_request', message: 'Invalid client credentials', status_code: status });
      }
      const token = `token-${++counter}`;
      issued.add(token);
      return json(200, { access_token: token, token_type: 'Bearer', expires_in: state.expiresIn, scope: 'digital-plataform:gateway-api' });
    }

    state.apiRequests.push(seen);
    await sleep(state.apiDelayMs);
    if (path.includes('/by-short-id/')) return json(200, { short_id: path.split('/').at(-1) });
    const token = seen.authorization?.replace(/^Bearer /, '') ?? '';
    if (!issued.has(token) || state.revoked.has(token) || state.alwaysUnauthorized.has(path)) {
      if (path.endsWith('/payment-intent')) {
        res.writeHead(401, { 'content-type': 'text/plain' });
        return res.end('Unauthorized');
      }
      return json(401, { error_code: 'unauthorized', message: 'Unauthorized', status_code: 401 });
    }
    return json(req.method === 'POST' ? 201 : 200, { ok: true, token_used: token.length > 0 });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as TokenServer;
}
