// The merchant's side of the checkout notification: the platform POSTs the result of a checkout to
// the merchant's `notification.url` with `Authorization: Basic` built from the credentials the
// merchant configured. Nothing in the payload may be trusted before that header matches, and then
// the payload must be what the contract says (`CheckoutNotification`).
import { checkCheckoutNotification, type SchemaProblem } from '@payment-platform/contract/checkout-notification';
import type { webhooks } from '@payment-platform/contract/types';
import { sameSecret, textOf, textOfBase64 } from '../encoding.ts';

/** The payload of the checkout notification (`components['schemas']['CheckoutNotification']`). */
export type CheckoutNotification = webhooks['checkout-notification']['post']['requestBody']['content']['application/json'];

/** The `notification.user_credentials` the merchant set through `PATCH /technical-configurations`. */
export interface NotificationCredentials {
  user: string;
  password: string;
}

/** One way the payload breaks the contract: where (`payment.result.status`) and what. */
export interface PayloadProblem {
  field: string;
  message: string;
}

export type CheckoutNotificationFailure =
  /** No `Authorization` header. */
  | 'missing_credentials'
  /** Not HTTP Basic, or the user or password differs (which one is not said). */
  | 'invalid_credentials'
  /** Not JSON, or not a `CheckoutNotification`; see `problems`. */
  | 'invalid_payload';

export class CheckoutNotificationError extends Error {
  override readonly name = 'CheckoutNotificationError';
  constructor(
    readonly reason: CheckoutNotificationFailure,
    message: string,
    readonly problems: PayloadProblem[] = [],
  ) {
    super(message);
  }
}

export function isCheckoutNotificationError(value: unknown): value is CheckoutNotificationError {
  return value instanceof CheckoutNotificationError;
}

/** Header bags of Node (`req.headers`), Express and fetch (`Headers`). */
export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function authorizationOf(headers: HeaderBag): string | undefined {
  if (headers instanceof Headers) return headers.get('authorization') ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'authorization');
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/** Throws a CheckoutNotificationError unless the Basic header carries exactly these credentials. */
export function verifyNotificationCredentials(headers: HeaderBag, credentials: NotificationCredentials): void {
  // The platform stores neither an empty user nor an empty password (minLength 1 in the contract): an
  // empty one here is a configuration left unset (an empty environment variable), which would accept
  // `Basic Og==` from anyone. A TypeError, as a missing one: the receiver answers 500.
  if (typeof credentials?.user !== 'string' || typeof credentials.password !== 'string' || credentials.user === '' || credentials.password === '') {
    throw new TypeError('the notification credentials need a non-empty user and password (those configured with PATCH /technical-configurations)');
  }
  const header = authorizationOf(headers);
  if (!header) throw new CheckoutNotificationError('missing_credentials', 'the notification carries no Authorization header');
  const match = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  const decoded = match ? textOfBase64(match[1]!) : '';
  const colon = decoded.indexOf(':');
  // Both comparisons always run, so a wrong user costs the same time as a wrong password.
  const userMatches = sameSecret(colon < 0 ? '' : decoded.slice(0, colon), credentials.user);
  const passwordMatches = sameSecret(colon < 0 ? '' : decoded.slice(colon + 1), credentials.password);
  if (colon < 0 || !(userMatches && passwordMatches)) {
    throw new CheckoutNotificationError('invalid_credentials', 'the notification Basic credentials do not match the configured notification credentials');
  }
}

function problemOf(error: SchemaProblem): PayloadProblem {
  const segments = error.instancePath.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  const field = segments.join('.') || '(body)';
  const allowed = error.keyword === 'enum' ? ` (${(error.params.allowedValues as unknown[]).join(', ')})` : '';
  const message = error.keyword === 'required' ? 'is required' : `${error.message ?? 'is invalid'}${allowed}`;
  return { field, message };
}

function parsePayload(body: unknown): unknown {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return body;
  const text = typeof body === 'string' ? body : textOf(body);
  try {
    return JSON.parse(text);
  } catch {
    throw new CheckoutNotificationError('invalid_payload', 'the notification body is not JSON', [{ field: '(body)', message: 'is not JSON' }]);
  }
}

/** Throws a CheckoutNotificationError unless the payload is a `CheckoutNotification`. */
export function validateCheckoutNotification(body: unknown): CheckoutNotification {
  const payload = parsePayload(body);
  // The contract's schema, compiled at build time (Ajv standalone) in the contract package.
  if (checkCheckoutNotification(payload)) return payload as CheckoutNotification;
  const problems = (checkCheckoutNotification.errors ?? []).map(problemOf);
  const list = problems.map((p) => `${p.field} ${p.message}`).join('; ');
  throw new CheckoutNotificationError('invalid_payload', `the notification payload breaks the contract: ${list}`, problems);
}

/**
 * Checks the Basic credentials (constant time) and then the payload against the contract, and
 * returns the typed notification. `body` is the raw body (string or bytes) or the parsed JSON.
 * Throws a CheckoutNotificationError whose `reason` says what failed.
 */
export function verifyCheckoutNotification(headers: HeaderBag, body: unknown, credentials: NotificationCredentials): CheckoutNotification {
  verifyNotificationCredentials(headers, credentials);
  return validateCheckoutNotification(body);
}
