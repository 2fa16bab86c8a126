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

export function isTokenError(value: unknown): value is TokenError {
  return (
    isRecord(value) &&
    typeof value.error_code === 'string' &&
    typeof value.message === 'string' &&
    typeof value.status_code === 'number'
  );
}

export function isOAuthError(value: unknown): value is OAuthError {
  return isRecord(value) && typeof value.error === 'string' && typeof value.error_description === 'string';
}

/** A readable message from any area's error body (the plain-text 401 included). */
export function platformErrorMessage(error: PaymentLinkError | WebCheckoutError | RecurrenceError): string {
  if (typeof error === 'string') return error;
  return error.message ?? 'platform error without a message';
}
