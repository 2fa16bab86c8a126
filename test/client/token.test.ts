// Token behaviour of the platform client against a tiny counting platform: one token request for a
// cold burst, transparent renewal, one refresh and one retry after a 401, no token where the
// contract's security asks for none, both token endpoint forms, and typed token failures. The token
// and the client secret never reach the observer nor an error message.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPlatformClient,
  isTokenEndpointError,
  isTokenError,
  isOAuthError,
  isPlatformError,
  TokenEndpointError,
  type PlatformClientOptions,
  type RequestObservation,
} from '../../client/index.ts';
import { createAccessTokenCache } from '../../client/token.ts';
import { startTokenServer, type TokenServer } from './token-server.ts';

const SECRET = 'demo-seller-secret-s3cr3t';
let platform: TokenServer;
let observed: RequestObservation[];

beforeEach(async () => {
  platform = await startTokenServer();
  observed = [];
});

afterEach(async () => {
  await platform.close();
});

function clientFor(options: Partial<PlatformClientOptions> = {}) {
  return createPlatformClient({
    baseUrl: platform.url,
    clientId: 'demo-seller-client',
    clientSecret: SECRET,
    observe: (o) => observed.push(o),
    ...options,
  });
}

const getSeller = (client: ReturnType<typeof clientFor>) => client.GET('/dpy/payment-link/v1/sellers');

describe('access tokens of the platform client', () => {
  it('fetches exactly one token for 100 concurrent calls on a cold client', async () => {
    const client = clientFor();
    const results = await Promise.all(Array.from({ length: 100 }, () => getSeller(client)));
    expect(results.map((r) => r.response.status)).toEqual(Array(100).fill(200));
    expect(platform.tokenRequests).toHaveLength(1);
    expect(new Set(platform.apiRequests.map((r) => r.authorization))).toEqual(new Set(['Bearer token-1']));
  });

  it('reuses the token while it is valid', async () => {
    const client = clientFor();
    for (let i = 0; i < 5; i++) await getSeller(client);
    expect(platform.tokenRequests).toHaveLength(1);
  });

  it('renews an expired token transparently before the call', async () => {
    platform.expiresIn = 1;
    const client = clientFor({ tokenSkewSeconds: 0 });
    expect((await getSeller(client)).response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await getSeller(client)).response.status).toBe(200);
    expect(platform.tokenRequests).toHaveLength(2);
    expect(platform.apiRequests.map((r) => r.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('renews a token the skew before expires_in runs out (half the lifetime when shorter than the skew)', async () => {
    let now = 0;
    let issued = 0;
    const tokens = createAccessTokenCache(async () => ({ accessToken: `t${++issued}`, expiresInSeconds: 3599 }), { skewSeconds: 60, now: () => now });
    expect(await tokens.get()).toBe('t1');
    now = (3599 - 60) * 1000 - 1;
    expect(await tokens.get()).toBe('t1');
    now += 1;
    expect(await tokens.get()).toBe('t2');

    const short = createAccessTokenCache(async () => ({ accessToken: `s${++issued}`, expiresInSeconds: 10 }), { skewSeconds: 60, now: () => now });
    const first = await short.get();
    now += 4_999;
    expect(await short.get()).toBe(first);
    now += 1;
    expect(await short.get()).not.toBe(first);
  });

  it('answers a 401 with one refresh and one retry, body included', async () => {
    const client = clientFor();
    await getSeller(client);
    platform.revoked.add('token-1');
    const body = { customer: { customer_id: '52998224704' } } as never;
    const { response } = await client.POST('/dpy/web-checkout/v1/payment-intent', { body });
    expect(response.status).toBe(201);
    expect(platform.tokenRequests).toHaveLength(2);
    const intents = platform.apiRequests.filter((r) => r.path.endsWith('/payment-intent'));
    expect(intents.map((r) => [r.authorization, r.body])).toEqual([
      ['Bearer token-1', JSON.stringify(body)],
      ['Bearer token-2', JSON.stringify(body)],
    ]);
    expect(observed.filter((o) => o.operationId === 'createPaymentIntent').map((o) => [o.attempt, o.status, o.retryInMs])).toEqual([
      [1, 401, 0],
      [2, 201, undefined],
    ]);
  });

  it('does not loop: a second 401 is the answer, typed as the plain-text web checkout 401', async () => {
    platform.alwaysUnauthorized.add('/dpy/web-checkout/v1/payment-intent');
    const client = clientFor();
    const { error, response } = await client.POST('/dpy/web-checkout/v1/payment-intent', { body: {} as never });
    expect(response.status).toBe(401);
    expect(error).toBe('Unauthorized');
    expect(platform.apiRequests).toHaveLength(2);
    expect(platform.tokenRequests).toHaveLength(2);
  });

  it('refreshes once for a burst of 401s answered with the same token', async () => {
    const client = clientFor();
    await getSeller(client);
    platform.revoked.add('token-1');
    const results = await Promise.all(Array.from({ length: 20 }, () => getSeller(client)));
    expect(results.every((r) => r.response.status === 200)).toBe(true);
    expect(platform.tokenRequests).toHaveLength(2);
  });

  it('never sends a token to the public short-id lookup, and fetches none for it', async () => {
    const client = clientFor();
    const { response } = await client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'Xk7pQ2aZ' } } });
    expect(response.status).toBe(200);
    expect(platform.apiRequests[0]).toMatchObject({ path: '/dpy/payment-link/v1/payment-links/by-short-id/Xk7pQ2aZ', authorization: undefined });
    expect(platform.tokenRequests).toHaveLength(0);
    // Still none once the client holds a token.
    await getSeller(client);
    await client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'Xk7pQ2aZ' } } });
    expect(platform.apiRequests.at(-1)!.authorization).toBeUndefined();
  });

  it('serves the public lookup without credentials and refuses a protected call clearly', async () => {
    const client = createPlatformClient({ baseUrl: platform.url });
    const { response } = await client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'abc' } } });
    expect(response.status).toBe(200);
    await expect(getSeller(client)).rejects.toThrow(/getSeller needs an access token/);
    await expect(getSeller(client)).rejects.toMatchObject({ name: 'PlatformError', operationId: 'getSeller', code: 'missing_credentials', status: undefined });
  });

  it('uses the first form: credentials and scope in the form body', async () => {
    await getSeller(clientFor({ tokenEndpoint: 'form', scope: 'digital-platform:gateway-api' }));
    const [request] = platform.tokenRequests;
    expect(request).toMatchObject({ path: '/authentication/oauth2/-core/access_token', authorization: undefined });
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'demo-seller-client',
      client_secret: SECRET,
      scope: 'digital-platform:gateway-api',
    });
  });

  it('uses the second form: credentials in a Basic header, only grant_type in the body', async () => {
    await getSeller(clientFor({ tokenEndpoint: 'basic' }));
    const [request] = platform.tokenRequests;
    expect(request!.path).toBe('/authentication/oauth2/access_token');
    expect(request!.authorization).toBe(`Basic ${Buffer.from(`demo-seller-client:${SECRET}`).toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({ grant_type: 'client_credentials' });
  });

  it('asks the token host (authUrl) for tokens and the platform host for calls', async () => {
    const auth = await startTokenServer({ issued: platform.issued });
    try {
      const client = clientFor({ authUrl: auth.url });
      expect((await getSeller(client)).response.status).toBe(200);
      expect(auth.tokenRequests).toHaveLength(1);
      expect(platform.tokenRequests).toHaveLength(0);
      expect(auth.apiRequests).toHaveLength(0);
      expect(platform.apiRequests.map((r) => r.path)).toEqual(['/dpy/payment-link/v1/sellers']);
    } finally {
      await auth.close();
    }
  });

  it('keeps a path prefix of baseUrl for calls, and matches the contract under it', async () => {
    const auth = await startTokenServer({ issued: platform.issued });
    try {
      const client = clientFor({ baseUrl: `${platform.url.replace('http', 'HTTP')}/gateway/`, authUrl: auth.url });
      await client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'Xk7pQ2aZ' } } });
      expect((await getSeller(client)).response.status).toBe(200);
      expect(platform.apiRequests.map((r) => [r.path, r.authorization])).toEqual([
        ['/gateway/dpy/payment-link/v1/payment-links/by-short-id/Xk7pQ2aZ', undefined],
        ['/gateway/dpy/payment-link/v1/sellers', 'Bearer token-1'],
      ]);
      expect(auth.tokenRequests.map((r) => r.path)).toEqual(['/authentication/oauth2/-core/access_token']);
    } finally {
      await auth.close();
    }
  });

  it.each([
    ['baseUrl', 'https://platform.test/dpy/payment-link/v1', '/dpy/payment-link/v1'],
    ['baseUrl', 'https://platform.test/rpy/', '/rpy'],
    ['authUrl', 'https://auth.test/authentication/oauth2', '/authentication/oauth2'],
  ])('refuses a %s that repeats the platform base paths (%s), saying what to drop', (name, value, prefix) => {
    const options = name === 'baseUrl' ? { baseUrl: value } : { baseUrl: 'https://platform.test', authUrl: value };
    expect(() => createPlatformClient(options)).toThrow(
      new TypeError(`${name} must be the host (and a gateway's own path prefix, if any), without the platform's base paths: every path already starts with one (drop ${JSON.stringify(prefix)} from ${JSON.stringify(value)})`),
    );
  });

  it.each(['https://platform.test', 'https://platform.test/', 'https://platform.test/gateway', 'https://platform.test/gateway/rpy/', 'https://platform.test/dpy-proxy'])(
    'takes a host with or without a gateway prefix of its own (%s)',
    (baseUrl) => {
      expect(() => createPlatformClient({ baseUrl })).not.toThrow();
    },
  );

  it('surfaces a refused token request of the first form as a typed error with the TokenError body', async () => {
    platform.tokenFailure = 401;
    const failure = await getSeller(clientFor()).catch((e: unknown) => e);
    expect(isTokenEndpointError(failure)).toBe(true);
    const error = failure as TokenEndpointError;
    expect(error).toMatchObject({ form: 'form', status: 401, operationId: 'issueAccessToken', code: 'invalid_credentials', platformMessage: 'Invalid client credentials' });
    expect(isTokenError(error.body) && error.body.error_code).toBe('invalid_credentials');
    expect(error.message).toBe('token endpoint (credentials in the form) answered 401, invalid_credentials: Invalid client credentials');
    expect(platform.apiRequests).toHaveLength(0);
  });

  it('surfaces a refused token request of the second form as a typed error with the OAuthError body', async () => {
    platform.tokenFailure = 400;
    const failure = await getSeller(clientFor({ tokenEndpoint: 'basic' })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TokenEndpointError);
    const { body, form, status } = failure as TokenEndpointError;
    expect({ form, status }).toEqual({ form: 'basic', status: 400 });
    expect(isOAuthError(body) && body.error).toBe('invalid_request');
  });

  it.each(['form', 'basic'] as const)('surfaces a 200 token answer that is not JSON (%s form) as a TokenEndpointError, not a parse error', async (form) => {
    const client = createPlatformClient({
      baseUrl: 'http://platform.test',
      clientId: 'demo-seller-client',
      clientSecret: SECRET,
      tokenEndpoint: form,
      fetch: async () => new Response('<html>gateway</html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    });
    const failure = await getSeller(client).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TokenEndpointError);
    expect(failure).toMatchObject({ form, status: 200, operationId: form === 'form' ? 'issueAccessToken' : 'issueAccessTokenWithBasicAuth', body: undefined });
    expect((failure as Error).message).toBe(`token endpoint (${form === 'form' ? 'credentials in the form' : 'Basic credentials'}) answered 200, no token in the answer`);
  });

  it('throws a PlatformError invalid_response for a 2xx answer of an operation whose body is not JSON', async () => {
    const client = createPlatformClient({
      baseUrl: 'http://platform.test',
      fetch: async () => new Response('<html>maintenance</html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    });
    const lookup = () => client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'AB12CD34' } } });
    const failure = await lookup().catch((e: unknown) => e);
    expect(isPlatformError(failure)).toBe(true);
    expect(failure).toMatchObject({ operationId: 'getPaymentLinkByShortId', status: undefined, code: 'invalid_response' });
    expect((failure as Error).message).toMatch(/^getPaymentLinkByShortId failed, invalid_response: its answer was 2xx but its body is not JSON \(/);
    expect((failure as Error).cause).toBeInstanceOf(SyntaxError);
    const viaRequest = await client.request('get', '/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'AB12CD34' } } }).catch((e: unknown) => e);
    expect(viaRequest).toMatchObject({ code: 'invalid_response', operationId: 'getPaymentLinkByShortId' });
  });

  it('tries again after a failed token request instead of keeping the failure', async () => {
    platform.tokenFailure = 401;
    const client = clientFor();
    await expect(getSeller(client)).rejects.toBeInstanceOf(TokenEndpointError);
    platform.tokenFailure = undefined;
    expect((await getSeller(client)).response.status).toBe(200);
  });

  it('bounds each exchange with timeoutMs', async () => {
    const client = clientFor({ timeoutMs: 400, maxRetries: 1, retryBaseDelayMs: 1 });
    await getSeller(client); // the token first: its exchange has the same limit, and a loaded machine may take it
    observed.length = 0;
    platform.apiDelayMs = 3_000;
    await expect(getSeller(client)).rejects.toMatchObject({ name: 'TimeoutError', code: 'timeout', operationId: 'getSeller', attempts: 2 });
    // A GET is retried after a timed-out exchange; the last one ends the call.
    expect(observed.filter((o) => o.operationId === 'getSeller').map((o) => [o.attempt, o.error, o.retryInMs !== undefined])).toEqual([
      [1, 'TimeoutError', true],
      [2, 'TimeoutError', false],
    ]);
  });

  it('never shows the token or the client secret to the observer or in errors', async () => {
    const client = clientFor();
    await getSeller(client);
    platform.revoked.add('token-1');
    await getSeller(client);
    platform.tokenFailure = 401;
    platform.revoked.add('token-2');
    const failure = await getSeller(client).catch((e: unknown) => e);
    const everything = JSON.stringify(observed) + String(failure) + JSON.stringify(failure) + (failure as Error).stack;
    for (const secret of ['token-1', 'token-2', SECRET]) expect(everything).not.toContain(secret);
    expect(observed.map((o) => o.operationId)).toContain('issueAccessToken');
    expect(Object.keys(observed[0]!).sort()).toEqual(['attempt', 'authenticated', 'durationMs', 'method', 'operationId', 'status', 'url']);
  });
});
