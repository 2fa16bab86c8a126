// The web checkout's own errors, with the codes and messages its contract decides, and its rules
// about its error bodies; http/error-renderers.ts renders them as `{code, message, details[{field, message}]}`.
import { sellerGuidError } from '../authentication/bearer.ts';
import type { WebCheckoutErrorRules } from '../http/error-renderers.ts';
import { ApiError, type Problem } from '../http/errors.ts';

export const PAYMENT_INTENT = '/dpy/web-checkout/v1/payment-intent';

export const WEB_CHECKOUT_ERROR_RULES: WebCheckoutErrorRules = {
  // Seed quirk: payment intent creation's 401 is a plain string.
  plainUnauthorized: [{ method: 'POST', path: PAYMENT_INTENT }],
  notRules: {
    '': { location: 'body', pointer: '', message: 'payment and product must be omitted when configurations.card_verification is true' },
    '/configurations': { location: 'body', pointer: '/configurations', message: 'card_verification and preauthorization cannot both be true' },
  },
};

/** A problem about a request body field, `customer.document_number` written as its JSON pointer. */
export const fieldProblem = (field: string, message: string): Problem => ({ location: 'body', pointer: `/${field.split('.').join('/')}`, message });

export const guidError = (sellerId: string) => sellerGuidError(`${JSON.stringify(sellerId)} is not a valid GUID`);

export const sellerNotFound = (sellerId: string) =>
  new ApiError(404, 'not_found', 'Seller not found', [{ location: 'token', pointer: '/x-seller-id', message: `No seller with id ${sellerId}` }]);

export const configurationNotFound = () =>
  new ApiError(404, 'not_found', 'Web checkout configuration not found', [
    { pointer: '/services/checkout', message: 'the seller has no web checkout configuration because its checkout service is off' },
  ]);

export const serviceNotEnabled = (service: string) =>
  new ApiError(403, 'service_not_enabled', `The ${service} service is not enabled for this seller`, [
    { pointer: `/services/${service}`, message: `service ${service} is not enabled` },
  ]);

export const validationError = (problems: Problem[]) => new ApiError(422, 'validation_error', 'One or more fields failed validation', problems);

export const countryRuleViolation = (problems: Problem[]) =>
  new ApiError(422, 'country_rule_violation', "One or more fields are not allowed in the seller's country", problems);
