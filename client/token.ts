// Access tokens of the platform's OAuth 2.0 client-credentials flow: fetched on first need, kept
// until shortly before `expires_in` runs out, and fetched by one request however many calls wait.
import type { Client } from 'openapi-fetch';
import type { paths } from '@payment-platform/contract/types';
import { isOAuthError, isTokenError, PlatformError, quoted, type OAuthError, type TokenError } from './errors.ts';
import { whenAborted } from './abort-listeners.ts';
import { base64OfText } from './encoding.ts';
import { retryAfterMs } from './retry.ts';

/** The two token endpoint forms of the contract. */
export type TokenEndpointForm =
  /** `POST /authentication/oauth2/-core/access_token`, credentials and scope in the form body (`issueAccessToken`). */
  | 'form'
  /** `POST /authentication/oauth2/access_token`, credentials in a Basic header (`issueAccessTokenWithBasicAuth`). */
  | 'basic';

/** Each form, for a check of the option at run time. */
export const TOKEN_ENDPOINT_FORMS: readonly TokenEndpointForm[] = ['form', 'basic'];

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
  /** Milliseconds the token endpoint asked to wait (`Retry-After` of a 429: too many failed attempts, say), when it did. */
  readonly retryAfterMs: number | undefined;

  constructor(form: TokenEndpointForm, status: number, body: unknown, options: { problem?: string; secret?: string; clientId?: string; retryAfterMs?: number | undefined } = {}) {
    const shaped = withoutSecret(isTokenError(body) ? body : isOAuthError(body) ? body : undefined, options.secret, options.clientId);
    const code = isTokenError(shaped) ? shaped.error_code : isOAuthError(shaped) ? shaped.error : undefined;
    const platformMessage = isTokenError(shaped) ? shaped.message : isOAuthError(shaped) ? shaped.error_description : undefined;
    const redirect = status >= 300 && status < 400 ? 'a redirect, which the client never follows (give it the token host itself as authUrl)' : undefined;
    const reason = code !== undefined ? quoted(`${code}: ${platformMessage}`) : (options.problem ?? redirect ?? 'no token in the answer');
    const operationId = form === 'form' ? 'issueAccessToken' : 'issueAccessTokenWithBasicAuth';
    super({ operationId, status, code, platformMessage }, `token endpoint (${form === 'form' ? 'credentials in the form' : 'Basic credentials'}) answered ${status}, ${reason}`);
    this.form = form;
    this.body = shaped;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The error body with the client secret taken out of its texts, at any depth, in the spellings the
 * client sends it (as it is, form-encoded, inside the Basic header's base64): a token endpoint (or a
 * proxy in front of it) that quotes the request back would otherwise put it into messages that get logged.
 */
function withoutSecret<T extends TokenError | OAuthError | undefined>(body: T, secret: string | undefined, clientId = ''): T {
  if (!body || !secret) return body;
  const spellings = [secret, new URLSearchParams({ s: secret }).toString().slice(2), encodeURIComponent(secret), base64OfText(`${clientId}:${secret}`)];
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return spellings.reduce((text, spelling) => text.split(spelling).join('[client secret]'), value);
    if (Array.isArray(value)) return value.map(clean);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, clean(inner)]));
    return value;
  };
  return clean(body) as T;
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

/** An access token the client can send: visible ASCII, as an RFC 6750 bearer token is (no space, no control character). */
const SENDABLE_TOKEN = /^[\x21-\x7e]+$/;

function issued(status: number, form: TokenEndpointForm, data: unknown): IssuedToken {
  const token = data as { access_token?: unknown; expires_in?: unknown } | undefined;
  if (typeof token?.access_token !== 'string' || typeof token.expires_in !== 'number') {
    throw new TokenEndpointError(form, status, undefined);
  }
  if (!SENDABLE_TOKEN.test(token.access_token)) {
    throw new TokenEndpointError(form, status, undefined, { problem: 'an access_token that is empty or not visible ASCII, which no Authorization header can carry' });
  }
  return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
}

/**
 * One token request, in the form the client is configured for, through the typed client. A 2xx body
 * is read as text and parsed here, so an answer that is not JSON is a TokenEndpointError like any
 * answer without a token, not a parse error thrown from inside openapi-fetch. Sent without cookies or
 * a browser's stored credentials (`credentials: 'omit'`): on a page of the token host's own origin, a
 * 401 with `WWW-Authenticate: Basic` would otherwise open the browser's login dialog, and the call
 * would wait on it.
 */
export async function requestAccessToken(client: Client<paths>, credentials: ClientCredentials, signal?: AbortSignal): Promise<IssuedToken> {
  const formHeader = { 'content-type': 'application/x-www-form-urlencoded' };
  const secret = { secret: credentials.clientSecret, clientId: credentials.clientId };
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
      credentials: 'omit',
      signal,
    });
    if (error !== undefined || !response.ok) throw new TokenEndpointError('form', response.status, error, { ...secret, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) });
    return issued(response.status, 'form', parsed(data));
  }
  const basic = base64OfText(`${credentials.clientId}:${credentials.clientSecret}`);
  const { data, error, response } = await client.POST('/authentication/oauth2/access_token', {
    headers: { ...formHeader, authorization: `Basic ${basic}` },
    body: { grant_type: 'client_credentials' },
    parseAs: 'text',
    credentials: 'omit',
    signal,
  });
  if (error !== undefined || !response.ok) throw new TokenEndpointError('basic', response.status, error, { ...secret, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) });
  return issued(response.status, 'basic', parsed(data));
}

export interface AccessTokenCache {
  /** The cached token while it is valid, without waiting (the hot path of every call). */
  cached(): string | undefined;
  /**
   * A valid token: the cached one, the one being fetched, or a new one. `signal` ends this call's
   * wait (rejecting with its reason); the token request ends too once no call waits for it.
   */
  get(signal?: AbortSignal): Promise<string>;
  /**
   * A token other than `rejected` (the one a call was answered 401 with): fetches a new one unless
   * another call already did, so a burst of 401s still costs one token request.
   */
  refresh(rejected: string, signal?: AbortSignal): Promise<string>;
}

/** One token request and the calls waiting for it. */
interface Flight {
  promise: Promise<string>;
  controller: AbortController;
  waiters: number;
}

export function createAccessTokenCache(
  fetchToken: (signal: AbortSignal) => Promise<IssuedToken>,
  options: { skewSeconds?: number; now?: () => number } = {},
): AccessTokenCache {
  const skewMs = (options.skewSeconds ?? DEFAULT_TOKEN_SKEW_SECONDS) * 1000;
  const now = options.now ?? Date.now;
  let current: { token: string; renewAt: number } | undefined;
  let inFlight: Flight | undefined;

  const takeOff = (): Flight => {
    const controller = new AbortController();
    const flight: Flight = { controller, waiters: 0, promise: Promise.resolve('') };
    flight.promise = fetchToken(controller.signal)
      .then(({ accessToken, expiresInSeconds }) => {
        const lifetimeMs = expiresInSeconds * 1000;
        // A lifetime shorter than the skew would expire on arrival: use half of it instead.
        const margin = Math.min(skewMs, lifetimeMs / 2);
        current = { token: accessToken, renewAt: now() + lifetimeMs - margin };
        return accessToken;
      })
      .finally(() => {
        if (inFlight === flight) inFlight = undefined;
      });
    // A request that every waiting call left is aborted and rejects with nobody to hear it.
    flight.promise.catch(() => undefined);
    return flight;
  };

  /** Waits for the token request in flight (started if none), until it settles or `signal` aborts. */
  const wait = (signal: AbortSignal | undefined): Promise<string> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const flight = (inFlight ??= takeOff());
    flight.waiters += 1;
    return new Promise<string>((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        stopWaiting?.();
        flight.waiters -= 1;
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        reject(signal!.reason);
        // No call waits any more: end the request, so that a stalled answer never holds later calls.
        if (flight.waiters === 0 && inFlight === flight) {
          inFlight = undefined;
          flight.controller.abort(new DOMException('no call waits for this token any more', 'AbortError'));
        }
      };
      const stopWaiting = signal ? whenAborted(signal, onAbort) : undefined;
      flight.promise.then(
        (token) => leave() && resolve(token),
        (error: unknown) => leave() && reject(error),
      );
    });
  };

  const cached = () => (current && now() < current.renewAt ? current.token : undefined);
  const get = (signal?: AbortSignal) => {
    const token = cached();
    return token === undefined ? wait(signal) : Promise.resolve(token);
  };
  return {
    cached,
    get,
    refresh(rejected, signal) {
      if (current?.token === rejected) current = undefined;
      return get(signal);
    },
  };
}
