// One typed client for every area of the platform. Path keys carry each area's full base path, so
// one `baseUrl` serves them all; the token endpoints go to `authUrl`.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '@payment-platform/contract/types';
import {
  createAccessTokenCache,
  DEFAULT_SCOPE,
  requestAccessToken,
  type AccessTokenCache,
  type TokenEndpointForm,
} from './token.ts';
import { platformTransport, type Fetch, type RequestObserver } from './transport.ts';

export interface PlatformClientOptions {
  /**
   * Platform host of the environment, scheme included (`https://...`). The platform names its SBX,
   * UAT/PRE and PROD environments but the contract carries no hosts: you always give them.
   */
  baseUrl: string;
  /** Token host of the environment; defaults to `baseUrl`. */
  authUrl?: string;
  /** Client credentials; needed for every operation except the public short-id lookup. */
  clientId?: string;
  clientSecret?: string;
  /** Scope asked by the `form` token endpoint; default `digital-plataform:gateway-api` (the seed's spelling). */
  scope?: string;
  /** `form` (default): credentials and scope in the form body; `basic`: credentials in a Basic header. */
  tokenEndpoint?: TokenEndpointForm;
  /** A token is renewed this many seconds before `expires_in` runs out (default 60). */
  tokenSkewSeconds?: number;
  /** Custom fetch (a proxy agent, a test double); receives the final request. */
  fetch?: Fetch;
  /** Time limit of each HTTP exchange in milliseconds (token request, call and its retry each). */
  timeoutMs?: number;
  /** Called after each HTTP exchange with its operation, URL, status and duration; never a header or body. */
  observe?: RequestObserver;
}

/** The openapi-fetch client over the contract's `paths`: `data` and `error` typed per operation. */
export type PlatformClient = Client<paths>;

function hostUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute URL such as https://host.example (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`${name} must be an http(s) URL`);
  if (url.search || url.hash) throw new TypeError(`${name} must be a host (and path prefix), without query or fragment`);
  // Normalized as Request normalizes URLs, so the token host swap can match the prefix.
  return url.href.replace(/\/+$/, '');
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const baseUrl = hostUrl('baseUrl', options.baseUrl);
  const authUrl = hostUrl('authUrl', options.authUrl ?? options.baseUrl);
  let tokens: AccessTokenCache | undefined;
  const transport = platformTransport({
    baseUrl,
    authUrl,
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    timeoutMs: options.timeoutMs,
    observe: options.observe,
    tokens: () => tokens,
  });
  const { clientId, clientSecret } = options;
  if (Boolean(clientId) !== Boolean(clientSecret)) throw new TypeError('clientId and clientSecret go together');
  if (clientId && clientSecret) {
    // Token requests use a client of their own, so middleware added to the returned client never
    // sees the client secret.
    const tokenClient = createClient<paths>({ baseUrl, fetch: transport });
    const credentials = { clientId, clientSecret, scope: options.scope ?? DEFAULT_SCOPE, form: options.tokenEndpoint ?? 'form' };
    tokens = createAccessTokenCache(() => requestAccessToken(tokenClient, credentials), { skewSeconds: options.tokenSkewSeconds });
  }
  return createClient<paths>({ baseUrl, fetch: transport });
}
