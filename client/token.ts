// Access tokens of the platform's OAuth 2.0 client-credentials flow: fetched on first need, kept
// until shortly before `expires_in` runs out, and fetched by one request however many calls wait.
import type { Client } from 'openapi-fetch';
import type { paths } from '@payment-platform/contract/types';
import { isOAuthError, isTokenError, PlatformError, type OAuthError, type TokenError } from './errors.ts';

/** The two token endpoint forms of the contract. */
export type TokenEndpointForm =
  /** `POST /authentication/oauth2/-core/access_token`, credentials and scope in the form body (`issueAccessToken`). */
  | 'form'
  /** `POST /authentication/oauth2/access_token`, credentials in a Basic header (`issueAccessTokenWithBasicAuth`). */
  | 'basic';

export const DEFAULT_SCOPE = 'digital-plataform:gateway-api';
export const DEFAULT_TOKEN_SKEW_SECONDS = 60;

export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

/**
 * The token endpoint refused or failed. `body` is the contract's error body of the form used
 * (`TokenError` for `form`, `OAuthError` for `basic`) when the answer had that shape. Neither the
 * message nor any property carries the client secret or a token.
 */
export class TokenEndpointError extends PlatformError {
  override name = 'TokenEndpointError';
  readonly form: TokenEndpointForm;
  declare readonly status: number;
  readonly body: TokenError | OAuthError | undefined;

  constructor(form: TokenEndpointForm, status: number, body: unknown) {
    const shaped = isTokenError(body) ? body : isOAuthError(body) ? body : undefined;
    const code = isTokenError(shaped) ? shaped.error_code : isOAuthError(shaped) ? shaped.error : undefined;
    const platformMessage = isTokenError(shaped) ? shaped.message : isOAuthError(shaped) ? shaped.error_description : undefined;
    const reason = code === undefined ? 'no token in the answer' : `${code}: ${platformMessage}`;
    const operationId = form === 'form' ? 'issueAccessToken' : 'issueAccessTokenWithBasicAuth';
    super({ operationId, status, code, platformMessage }, `token endpoint (${form === 'form' ? 'credentials in the form' : 'Basic credentials'}) answered ${status}, ${reason}`);
    this.form = form;
    this.body = shaped;
  }
}

export function isTokenEndpointError(value: unknown): value is TokenEndpointError {
  return value instanceof TokenEndpointError;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  scope: string;
  form: TokenEndpointForm;
}

/** The body of a 2xx token answer, read as text by openapi-fetch: JSON, or undefined when it is not (a proxy's HTML page). */
function parsed(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function issued(status: number, form: TokenEndpointForm, data: unknown): IssuedToken {
  const token = data as { access_token?: unknown; expires_in?: unknown } | undefined;
  if (typeof token?.access_token !== 'string' || typeof token.expires_in !== 'number') {
    throw new TokenEndpointError(form, status, undefined);
  }
  return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
}

/**
 * One token request, in the form the client is configured for, through the typed client. A 2xx body
 * is read as text and parsed here, so an answer that is not JSON is a TokenEndpointError like any
 * answer without a token, not a parse error thrown from inside openapi-fetch.
 */
export async function requestAccessToken(client: Client<paths>, credentials: ClientCredentials): Promise<IssuedToken> {
  const formHeader = { 'content-type': 'application/x-www-form-urlencoded' };
  if (credentials.form === 'form') {
    const { data, error, response } = await client.POST('/authentication/oauth2/-core/access_token', {
      headers: formHeader,
      body: {
        grant_type: 'client_credentials',
        client_id: credentials.clientId,
        client_secret: credentials.clientSecret,
        scope: credentials.scope,
      },
      parseAs: 'text',
    });
    if (error !== undefined || !response.ok) throw new TokenEndpointError('form', response.status, error);
    return issued(response.status, 'form', parsed(data));
  }
  const basic = Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64');
  const { data, error, response } = await client.POST('/authentication/oauth2/access_token', {
    headers: { ...formHeader, authorization: `Basic ${basic}` },
    body: { grant_type: 'client_credentials' },
    parseAs: 'text',
  });
  if (error !== undefined || !response.ok) throw new TokenEndpointError('basic', response.status, error);
  return issued(response.status, 'basic', parsed(data));
}

export interface AccessTokenCache {
  /** The cached token while it is valid, without waiting (the hot path of every call). */
  cached(): string | undefined;
  /** A valid token: the cached one, the one being fetched, or a new one. */
  get(): Promise<string>;
  /**
   * A token other than `rejected` (the one a call was answered 401 with): fetches a new one unless
   * another call already did, so a burst of 401s still costs one token request.
   */
  refresh(rejected: string): Promise<string>;
}

export function createAccessTokenCache(
  fetchToken: () => Promise<IssuedToken>,
  options: { skewSeconds?: number; now?: () => number } = {},
): AccessTokenCache {
  const skewMs = (options.skewSeconds ?? DEFAULT_TOKEN_SKEW_SECONDS) * 1000;
  const now = options.now ?? Date.now;
  let current: { token: string; renewAt: number } | undefined;
  let inFlight: Promise<string> | undefined;

  const fetchNew = () => {
    inFlight ??= fetchToken()
      .then(({ accessToken, expiresInSeconds }) => {
        const lifetimeMs = expiresInSeconds * 1000;
        // A lifetime shorter than the skew would expire on arrival: use half of it instead.
        const margin = Math.min(skewMs, lifetimeMs / 2);
        current = { token: accessToken, renewAt: now() + lifetimeMs - margin };
        return accessToken;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  const cached = () => (current && now() < current.renewAt ? current.token : undefined);
  const get = () => {
    const token = cached();
    return token === undefined ? fetchNew() : Promise.resolve(token);
  };
  return {
    cached,
    get,
    refresh(rejected) {
      if (current?.token === rejected) current = undefined;
      return get();
    },
  };
}
