// The error bodies of the platform, one shape per area, taken from the contract's schemas. The
// client's `error` is already typed per operation; these names and guards serve code that handles
// errors of a whole area in one place. The guards check the shape only: use the one of the area
// that was called (a web checkout 500 body, `message` alone, also fits the recurrence shape).
import type { components, operations } from '@payment-platform/contract/types';

type Schemas = components['schemas'];

/** Payment link API: `error_code`, `message`, `status_code` (not always the HTTP status), `details` on 400. */
export type PaymentLinkError = Schemas['PaymentLinkError'];

/** The plain-text 401 body of payment intent creation (seed quirk kept by the contract: `Unauthorized`). */
export type WebCheckoutPlainUnauthorized = operations['createPaymentIntent']['responses'][401]['content']['text/plain'];

/** Web checkout API: `code` (always on 400, never on 500), `message`, `details`; or the plain-text 401. */
export type WebCheckoutError =
  | Schemas['WebCheckoutError']
  | Schemas['WebCheckoutBadRequestError']
  | Schemas['WebCheckoutServerError']
  | WebCheckoutPlainUnauthorized;

/** Subscription, plan and subscription webhook APIs: every field optional. */
export type RecurrenceError = Schemas['RecurrenceError'];

/** First token endpoint form (`issueAccessToken`): `error_code`, `message`, `status_code`. */
export type TokenError = Schemas['TokenError'];

/** Second token endpoint form (`issueAccessTokenWithBasicAuth`): `error`, `error_description` (RFC 6749). */
export type OAuthError = Schemas['OAuthError'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const optional = (value: unknown, type: 'string' | 'number') => value === undefined || typeof value === type;

export function isPaymentLinkError(value: unknown): value is PaymentLinkError {
  return (
    isRecord(value) &&
    typeof value.error_code === 'string' &&
    typeof value.message === 'string' &&
    typeof value.status_code === 'number'
  );
}

export function isWebCheckoutPlainUnauthorized(value: unknown): value is WebCheckoutPlainUnauthorized {
  return typeof value === 'string';
}

export function isWebCheckoutError(value: unknown): value is WebCheckoutError {
  if (isWebCheckoutPlainUnauthorized(value)) return true;
  return (
    isRecord(value) &&
    typeof value.message === 'string' &&
    optional(value.code, 'string') &&
    (value.details === undefined || Array.isArray(value.details)) &&
    !('error_code' in value)
  );
}

export function isRecurrenceError(value: unknown): value is RecurrenceError {
  return (
    isRecord(value) &&
    ['message', 'name', 'status_code'].some((key) => key in value) &&
    optional(value.message, 'string') &&
    optional(value.name, 'string') &&
    optional(value.status_code, 'number') &&
    !('error_code' in value) &&
    !('code' in value)
  );
}

/** The first token form is the payment link shape (`error_code`, `message`, `status_code`): one check serves both. */
export const isTokenError: (value: unknown) => value is TokenError = isPaymentLinkError;

export function isOAuthError(value: unknown): value is OAuthError {
  return isRecord(value) && typeof value.error === 'string' && typeof value.error_description === 'string';
}

/** A readable message from any area's error body (the plain-text 401 included). */
export function platformErrorMessage(error: PaymentLinkError | WebCheckoutError | RecurrenceError): string {
  if (typeof error === 'string') return error;
  return error.message ?? 'platform error without a message';
}

/** The platform's own error code of any area's body: `error_code`, `code` or `error` (none for recurrence bodies). */
export function platformErrorCode(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  for (const key of ['error_code', 'code', 'error'] as const) {
    if (typeof body[key] === 'string') return body[key];
  }
  return undefined;
}

/** The platform's own message of any area's body: `message`, `error_description`, or the plain-text body. */
export function platformErrorText(body: unknown): string | undefined {
  if (typeof body === 'string') return body || undefined;
  if (!isRecord(body)) return undefined;
  if (typeof body.message === 'string') return body.message;
  if (typeof body.error_description === 'string') return body.error_description;
  return undefined;
}

/** What every error of the client carries, returned or thrown. */
export interface PlatformErrorDetails {
  /** The contract's operationId of the failed exchange (the token request's when it was the one to fail). */
  operationId: string | undefined;
  /** HTTP status of the answer; undefined when there was none (network failure, timeout, abort). */
  status: number | undefined;
  /**
   * The platform's error code (`error_code`, `code` or `error` of the body); the recurrence areas
   * have none (their `message` is the fixed identifier); for failures without an answer, the
   * client's own: `timeout`, `aborted`, `connection_error`, `missing_credentials`, `invalid_response`
   * (a 2xx answer whose body is not JSON), `response_too_large` (a body over `maxResponseBytes`),
   * `foreign_host` (a protected call sent elsewhere than `baseUrl`, which the token never goes to).
   */
  code: string | undefined;
  /** The platform's message (`message`, `error_description` or the plain-text body), or the client's. */
  platformMessage: string | undefined;
}

/**
 * The base of every error the client makes: `operationId`, `status`, `code` and `platformMessage`,
 * whatever went wrong. `isPlatformError` narrows to it.
 */
export class PlatformError extends Error implements PlatformErrorDetails {
  override name = 'PlatformError';
  readonly operationId: string | undefined;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly platformMessage: string | undefined;

  constructor(details: PlatformErrorDetails, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.operationId = details.operationId;
    this.status = details.status;
    this.code = details.code;
    this.platformMessage = details.platformMessage;
  }
}

export function isPlatformError(value: unknown): value is PlatformError {
  return value instanceof PlatformError;
}

/** The most of an answer's text a message quotes (a proxy's error page can be megabytes; `platformMessage` keeps it whole). */
const QUOTED_CHARACTERS = 300;

/** An answer's text as a message quotes it: at most QUOTED_CHARACTERS, then how long it was. */
export function quoted(text: string): string {
  return text.length > QUOTED_CHARACTERS ? `${text.slice(0, QUOTED_CHARACTERS)}… (${text.length} characters)` : text;
}

function describe(operationId: string | undefined, status: number | undefined, code: string | undefined, text: string | undefined): string {
  const what = operationId ?? 'request';
  const reason = quoted([code, text].filter(Boolean).join(': ')) || 'no error body';
  return status === undefined ? `${what} failed, ${reason}` : `${what} answered ${status}, ${reason}`;
}

/**
 * The first problem a 400 or 422 body names, as `where: what`, with how many more: `path` and
 * `message` (payment links, sandbox), `field` and `message` (web checkout), `description_detail`
 * and `description` (recurrence areas). Undefined when the body names none.
 */
export function problemsSummary(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.details)) return undefined;
  const [first, ...rest] = body.details as unknown[];
  if (!isRecord(first)) return undefined;
  const text = [first.message, first.description].find((v): v is string => typeof v === 'string' && v !== '');
  const where = [first.path, first.field, first.description_detail].find((v): v is string => typeof v === 'string' && v !== '');
  if (text === undefined) return undefined;
  return `${where === undefined ? text : `${where}: ${text}`}${rest.length ? `, and ${rest.length} more` : ''}`;
}

/**
 * A platform answer that is not 2xx, as an Error: the call's result carries it as `failure` (next to
 * the typed `error` body), the page and iterator helpers throw it, `dataOrThrow` throws it.
 */
export class PlatformApiError<Body = unknown> extends PlatformError {
  override name = 'PlatformApiError';
  declare readonly status: number;
  /** The error body as answered (typed per operation on a call's `failure`). */
  readonly body: Body;
  /** Milliseconds the platform asked to wait (`Retry-After` of a 429 or 503), when it did. */
  readonly retryAfterMs: number | undefined;

  constructor(operationId: string | undefined, status: number, body: Body, retryAfterMs?: number) {
    const code = platformErrorCode(body);
    const platformMessage = platformErrorText(body);
    // The problems of a 400 or 422 in the message too: "... Invalid request (query.limit: must be <= 100)".
    const problems = problemsSummary(body);
    const named = problems === undefined || problems === platformMessage ? '' : ` (${quoted(problems)})`;
    super({ operationId, status, code, platformMessage }, describe(operationId, status, code, platformMessage) + named);
    this.body = body;
    this.retryAfterMs = retryAfterMs;
  }
}

export function isPlatformApiError(value: unknown): value is PlatformApiError {
  return value instanceof PlatformApiError;
}

/**
 * An error's message followed by its causes' (at most three), each once: fetch says only `fetch
 * failed`, and where and why (`connect ECONNREFUSED 127.0.0.1:8099`, `getaddrinfo ENOTFOUND
 * sandbox.example`) is its cause's.
 */
function reasonOf(cause: unknown): string {
  const parts: string[] = [];
  let next: unknown = cause;
  try {
    for (let depth = 0; depth < 4 && next !== undefined && next !== null; depth++) {
      const error = next instanceof AggregateError && !next.message ? (next.errors[0] ?? next) : next;
      const text = error instanceof Error ? error.message || String((error as { code?: unknown }).code ?? '') : String(error);
      if (text && !parts.some((part) => part.includes(text))) parts.push(text);
      next = error instanceof Error ? error.cause : undefined;
    }
  } catch {
    // A cause that cannot be read or turned into text (no prototype, a throwing getter): what was read.
  }
  return parts.join(': ');
}

/** Why no answer came: the exchange timed out, the caller aborted, or the connection failed. */
export type ConnectionFailure = 'timeout' | 'aborted' | 'connection_error';

/**
 * No answer came, after the retries the operation allows. `name` keeps the usual names
 * (`TimeoutError`, `AbortError`, or `ConnectionError` for a network failure), `cause` is the
 * original error, `attempts` the exchanges made.
 */
export class PlatformConnectionError extends PlatformError {
  declare readonly code: ConnectionFailure;
  declare readonly status: undefined;
  readonly attempts: number;

  constructor(operationId: string | undefined, code: ConnectionFailure, attempts: number, cause: unknown) {
    const text = reasonOf(cause);
    super({ operationId, status: undefined, code, platformMessage: undefined }, `${describe(operationId, undefined, code, text)} (${attempts} attempt${attempts === 1 ? '' : 's'})`, { cause });
    this.name = code === 'timeout' ? 'TimeoutError' : code === 'aborted' ? 'AbortError' : 'ConnectionError';
    this.attempts = attempts;
  }
}

export function isPlatformConnectionError(value: unknown): value is PlatformConnectionError {
  return value instanceof PlatformConnectionError;
}
