// The client outside Node: its root entry bundled for a browser (esbuild, as Vite and tsup use it)
// and run where only web globals exist (no Buffer, no process, no require): a Basic token request, a
// chunked answer, a refused secret, and the webhook helpers (build, verify, Fetch API handler).
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { sameSecret, textOfBase64 } from '../../client/encoding.ts';

const root = new URL('../../', import.meta.url).pathname;

/** The client's root entry bundled for a browser, as one script defining `PlatformClient`. */
async function browserBundle(): Promise<string> {
  const result = await build({
    entryPoints: [`${root}client/index.ts`],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'PlatformClient',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** Globals every browser and edge runtime has; nothing of Node's. */
const webGlobals = () => ({
  fetch,
  Request,
  Response,
  Headers,
  URL,
  URLSearchParams,
  FormData,
  Blob,
  TextEncoder,
  TextDecoder,
  ReadableStream,
  AbortController,
  AbortSignal,
  DOMException,
  atob,
  btoa,
  crypto: globalThis.crypto,
  setTimeout,
  clearTimeout,
  queueMicrotask,
  structuredClone,
  performance,
  EventTarget,
  Event,
  console,
});

describe('the client in a browser or an edge runtime', () => {
  it('bundles for a browser without Node built-ins, and works with web globals only', async () => {
    const code = await browserBundle();
    expect(code).not.toMatch(/\bBuffer\b|["']node:/); // and it runs below where require and process do not exist
    const context: Record<string, any> = webGlobals();
    runInNewContext(`${code}\nglobalThis.PlatformClient = PlatformClient;`, context);
    const { createPlatformClient, buildCheckoutNotification, checkoutNotificationRequest, checkoutNotificationHandler, verifyCheckoutNotification, TokenEndpointError } = context.PlatformClient;

    // A platform whose token endpoint checks Basic credentials (UTF-8, as the platform reads them), and whose seller answer is chunked (no length).
    const basic = `Basic ${Buffer.from('lojá-client:señal-secreta').toString('base64')}`;
    const seen: string[] = [];
    const tokenCredentials: string[] = [];
    const platformFetch = async (input: Request | string, init?: RequestInit) => {
      const request = input instanceof Request ? input : new Request(input, init);
      const url = new URL(request.url);
      seen.push(`${request.method} ${url.pathname} ${request.headers.get('authorization') ?? ''}`);
      if (url.pathname.startsWith('/authentication/')) tokenCredentials.push(request.credentials);
      if (url.pathname === '/authentication/oauth2/access_token') {
        if (request.headers.get('authorization') !== basic) {
          return Response.json({ error: 'invalid_client', error_description: 'Invalid client credentials' }, { status: 401 });
        }
        return Response.json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 3599, scope: 'digital-plataform:gateway-api' });
      }
      const seller = JSON.stringify({ seller_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', trade_name: 'Café da Montanha' });
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(seller.slice(0, 20)));
          controller.enqueue(new TextEncoder().encode(seller.slice(20)));
          controller.close();
        },
      });
      return new Response(chunked, { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = createPlatformClient({ baseUrl: 'http://platform.test', clientId: 'lojá-client', clientSecret: 'señal-secreta', tokenEndpoint: 'basic', fetch: platformFetch, maxRetries: 0 });
    const { data, error } = await client.GET('/dpy/payment-link/v1/sellers');
    expect(error).toBeUndefined();
    expect(data).toEqual({ seller_id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', trade_name: 'Café da Montanha' });
    expect(seen[0]).toBe(`POST /authentication/oauth2/access_token ${basic}`);
    expect(seen[1]).toBe('GET /dpy/payment-link/v1/sellers Bearer token-1');
    // Without cookies: a 401 with WWW-Authenticate: Basic must not open a browser's login dialog on the token host's own origin.
    expect(tokenCredentials).toEqual(['omit']);

    // A refused secret is the client's own error, with the secret taken out of what it quotes.
    const wrong = createPlatformClient({ baseUrl: 'http://platform.test', clientId: 'lojá-client', clientSecret: 'wrong', tokenEndpoint: 'basic', fetch: platformFetch, maxRetries: 0 });
    const refused = await wrong.GET('/dpy/payment-link/v1/sellers').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TokenEndpointError);
    expect(refused).toMatchObject({ status: 401 });

    // The merchant's side: a delivery built, verified, and received by the Fetch API handler.
    const credentials = { user: 'loja', password: 'pässwörd:with colon' };
    const delivery = checkoutNotificationRequest(credentials, buildCheckoutNotification({ mode: 'instant' }));
    expect(verifyCheckoutNotification(delivery.headers, delivery.body, credentials).mode).toBe('instant');
    expect(() => verifyCheckoutNotification(delivery.headers, delivery.body, { ...credentials, password: 'pässwörd:with colom' })).toThrow(/do not match/);
    const received: unknown[] = [];
    const handler = checkoutNotificationHandler({ credentials, onNotification: (n: unknown) => void received.push(n) });
    const answered = await handler(delivery.toRequest());
    expect(answered.status).toBe(200);
    expect(received).toEqual([delivery.notification]);
    const forged = await handler(checkoutNotificationRequest({ user: 'loja', password: 'guess' }, delivery.notification).toRequest());
    expect(forged.status).toBe(401);
    expect(received).toHaveLength(1);
  });
});

describe('the encoding helpers', () => {
  it('compares secrets byte for byte, whatever their lengths', () => {
    expect(sameSecret('s3nh@:forte', 's3nh@:forte')).toBe(true);
    expect(sameSecret('pässwörd', 'pässwörd')).toBe(true);
    for (const given of ['', 's3nh@:fort', 's3nh@:fortee', 's3nh@:forte\0', 'S3nh@:forte', 's3nh@:forte'.repeat(3), 'passwörd']) {
      expect(sameSecret(given, 's3nh@:forte'), JSON.stringify(given)).toBe(false);
    }
    expect(sameSecret('', '')).toBe(false); // an empty secret is never configured (the verifier refuses one first)
    expect(sameSecret('\0', '')).toBe(false);
  });

  it('reads base64 and base64url, padded or not, and nothing else', () => {
    const text = 'lojá:s3nh@ fortë?';
    const standard = Buffer.from(text).toString('base64');
    expect(textOfBase64(standard)).toBe(text);
    expect(textOfBase64(standard.replace(/=+$/, ''))).toBe(text);
    expect(textOfBase64(Buffer.from(text).toString('base64url'))).toBe(text);
    expect(textOfBase64('a')).toBe('');
    expect(textOfBase64('%%%%')).toBe('');
  });
});
