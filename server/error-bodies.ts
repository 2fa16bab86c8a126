// Any error as the body of the request's area: normalised (http/error-normalising.ts), remapped to
// what the operation documents, then rendered in the area's shape (http/error-renderers.ts) with the
// rules the area decides about its own bodies (web-checkout/errors.ts, payment-link/errors.ts).
import { areaOf } from './http/areas.ts';
import { asDocumented, toApiError, type DocumentedOperation } from './http/error-normalising.ts';
import {
  paymentLinkError,
  recurrenceErrorBody,
  tokenBasicCredentialsError,
  tokenBodyCredentialsError,
  webCheckoutError,
  type OperationAt,
  type RenderedError,
} from './http/error-renderers.ts';
import { PAYMENT_LINK_ERROR_RULES } from './payment-link/errors.ts';
import { WEB_CHECKOUT_ERROR_RULES } from './web-checkout/errors.ts';

export type { RenderedError } from './http/error-renderers.ts';

/** Any error as the body of the request's area. */
export function renderError(error: unknown, request: OperationAt, operation?: DocumentedOperation): RenderedError {
  const e = asDocumented(toApiError(error), operation);
  const area = areaOf(request.path);
  switch (area) {
    case 'token-body-credentials':
      return tokenBodyCredentialsError(e);
    case 'token-basic-credentials':
      return tokenBasicCredentialsError(e);
    case 'web-checkout':
      return webCheckoutError(e, request, WEB_CHECKOUT_ERROR_RULES);
    case 'subscription':
    case 'plan':
    case 'subscription-webhook':
      return recurrenceErrorBody(e, area);
    case 'payment-link':
    case 'sandbox':
    case 'outside': // package decision: paths outside every area answer in the payment link shape
      return paymentLinkError(e, request, PAYMENT_LINK_ERROR_RULES);
  }
}
