// The error body of each area's shape (the seed gives each area its own). The rules an area decides
// about its own bodies (an operation's plain-text 401, an upload's 413, the words of a contract rule)
// are the area's, handed in: server/error-bodies.ts picks the shape and the rules by the request's area.
import { ApiError, statusCode, statusMessage, type Problem } from './errors.ts';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  /** `text/plain` only for the seed's plain-string 401 of payment intent creation. */
  text?: string;
  json?: unknown;
}

/** One operation of an area. */
export interface OperationAt {
  method: string;
  path: string;
  /** The contract's path key of the operation the request was routed to, when it has one (`…/by-short-id/{short_id}`). */
  template?: string;
}
/** A rule's `path` is the request's path, or the template of the operation it was routed to. */
const isAt = (request: OperationAt, at: OperationAt) => request.method === at.method && (request.path === at.path || request.template === at.path);

/** `/product/0/value` as `product.0.value`. */
export function dotted(pointer: string): string {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
}

/** A problem in a sentence: `scope is required`, `limit must be integer`. */
function describe(problem: Problem): string {
  if (!problem.keyword) return problem.message; // already a sentence (body parser, unknown parameter)
  const field = dotted(problem.pointer) || problem.location || 'request';
  return problem.keyword === 'required' ? `${field} is required` : `${field} ${problem.message}`;
}

const isGrantTypeRefused = (p: Problem) => p.location === 'body' && p.pointer === '/grant_type' && p.keyword !== 'required';
const summary = (e: ApiError) => (e.problems.length && e.status === 400 ? e.problems.map(describe).join('; ') : e.message);

/** First token form: `{error_code, message, status_code}`; `status_code` equals the HTTP status. */
export function tokenBodyCredentialsError(e: ApiError): RenderedError {
  const refused = e.problems.some(isGrantTypeRefused);
  const code = e.code ?? (refused ? 'unsupported_grant_type' : e.status === 401 ? 'invalid_credentials' : statusCode(e.status));
  const message = refused ? 'grant_type must be client_credentials' : summary(e);
  return { status: e.status, headers: e.headers, json: { error_code: code, message, status_code: e.status } };
}

/** Second token form: RFC 6749 `{error, error_description}`. */
export function tokenBasicCredentialsError(e: ApiError): RenderedError {
  const refused = e.problems.some(isGrantTypeRefused);
  const error =
    e.code ?? (refused ? 'unsupported_grant_type' : e.status === 401 ? 'invalid_client' : e.status >= 500 ? 'server_error' : 'invalid_request');
  const description = refused ? 'grant_type must be client_credentials' : summary(e);
  // RFC 6749 §5.2: a 401 of the token endpoint names the scheme the client should use.
  const headers = e.status === 401 ? { ...e.headers, 'WWW-Authenticate': 'Basic realm="token"' } : e.headers;
  return { status: e.status, headers, json: { error, error_description: description } };
}

/** What the payment link area decides about its bodies. */
export interface PaymentLinkErrorRules {
  /** Operations whose bare 413 (a limit the validator enforced) is the area's own error. */
  tooLarge: ReadonlyArray<OperationAt & { error: (headers: Record<string, string>) => ApiError }>;
  /** Operations whose bare 404 from a refused path value (on an operation without 400) is the area's own error. */
  notFound: ReadonlyArray<OperationAt & { error: (headers: Record<string, string>) => ApiError }>;
}

/** Payment link (and sandbox): `{error_code, message, status_code, details?}`, details on every 400. */
export function paymentLinkError(e: ApiError, request: OperationAt, rules: PaymentLinkErrorRules): RenderedError {
  // A path value the contract refuses, or a path that does not decode (`%`), as the validator reports it.
  const pathRefused = e.problems.length > 0 && e.problems.every((p) => p.location === 'path' || p.message === 'malformed uri');
  const ownRules = e.code !== undefined ? undefined : e.status === 413 ? rules.tooLarge : e.status === 404 && pathRefused ? rules.notFound : undefined;
  const own = ownRules?.find((at) => isAt(request, at));
  if (own) e = own.error(e.headers);
  const body: Record<string, unknown> = { error_code: e.code ?? statusCode(e.status), message: e.message, status_code: e.status };
  // The sandbox's 422 (a rule the schema cannot carry) names its fields too, when it has them.
  if (e.status === 400 || (e.status === 422 && e.problems.length)) {
    body.details = e.problems.map((p) => ({ message: describe(p), path: [p.location, dotted(p.pointer)].filter(Boolean).join('.') }));
  }
  return { status: e.status, headers: e.headers, json: body };
}

/** What the web checkout area decides about its bodies. */
export interface WebCheckoutErrorRules {
  /** Operations whose 401 is the plain string `Unauthorized` (a seed quirk). */
  plainUnauthorized: ReadonlyArray<OperationAt>;
  /**
   * The contract's `not` rules in words (the validator only says "must NOT be valid"), by the
   * pointer of the refused object: present fields that break a rule, so 422.
   */
  notRules: Readonly<Record<string, Omit<Problem, 'keyword'>>>;
}

const WEB_CHECKOUT_MISSING = new Set(['required', 'minProperties']);
/** The area's closed list of codes by status; any other 4xx is an `invalid_request`. */
const WEB_CHECKOUT_CODES: Record<number, string> = {
  401: 'unauthorized',
  403: 'service_not_enabled',
  404: 'not_found',
  413: 'payload_too_large',
  422: 'validation_error',
  429: 'too_many_requests',
};
/** A body that is not an object, or no body at all: something is missing, not a broken field. */
const isNotAnObject = (p: Problem) => p.location === 'body' && p.pointer === '' && (p.keyword === undefined || p.keyword === 'type');

/**
 * Web checkout: `{code?, message, details}`. A validator refusal is a 400 `invalid_request` when
 * something is missing (or the body is not an object) and a 422 `validation_error` when a present
 * field breaks a rule (the area's decision). 500 carries `message` and `details` only.
 */
export function webCheckoutError(e: ApiError, request: OperationAt, rules: WebCheckoutErrorRules): RenderedError {
  if (e.status === 401 && rules.plainUnauthorized.some((at) => isAt(request, at))) {
    return { status: 401, headers: e.headers, text: 'Unauthorized' };
  }
  // Contract: an absent body (or one that is not JSON) is a 400; the validator's 415 says the same.
  if (e.status === 415 && e.code === undefined) {
    const problem: Problem = { location: 'body', pointer: '', message: 'The request body must be a JSON object (Content-Type: application/json)' };
    e = new ApiError(400, 'invalid_request', problem.message, [problem], e.headers);
  }
  const explainNot = (p: Problem): Problem => (p.keyword === 'not' && p.location === 'body' && rules.notRules[p.pointer]) || p;
  const details = e.problems.map(explainNot).map((p) => {
    const field = [p.location === 'body' ? undefined : p.location, dotted(p.pointer)].filter(Boolean).join('.');
    return field ? { field, message: describe(p) } : { message: describe(p) };
  });
  if (e.status >= 500) return { status: e.status, headers: e.headers, json: { message: e.message, details: [] } };
  let { status, code, message } = e;
  if (status === 400 && code === undefined && e.problems.length) {
    const missing = e.problems.some((p) => (p.keyword && WEB_CHECKOUT_MISSING.has(p.keyword)) || isNotAnObject(p));
    // The contract's texts replace the validator's generic one; a parser's own message (bad JSON) stays.
    const generic = message === statusMessage(400);
    [status, code, message] = missing
      ? [400, 'invalid_request', generic ? 'One or more required fields are missing' : message]
      : [422, 'validation_error', 'One or more fields failed validation'];
  }
  return { status, headers: e.headers, json: { code: code ?? WEB_CHECKOUT_CODES[status] ?? 'invalid_request', message, details } };
}

const RECURRENCE_MODULES = { subscription: 'be-subscription', plan: 'be-plan', 'subscription-webhook': 'dpm-webhooks' } as const;
export type RecurrenceArea = keyof typeof RECURRENCE_MODULES;

/**
 * Subscription, plan and subscription webhook: `{message, name, status_code, details?}`. Messages
 * are the area's fixed texts, so a 401 says `Unauthorized` whatever the reason.
 */
export function recurrenceErrorBody(e: ApiError, area: RecurrenceArea): RenderedError {
  const message = e.status === 401 || e.status === 429 ? statusMessage(e.status) : e.message;
  const body: Record<string, unknown> = { message, name: RECURRENCE_MODULES[area], status_code: e.status, ...e.fields };
  // 400: the schema's problems; 422: the fields a rule refused (an amount breaking the money rule).
  if (e.problems.length) {
    body.details = e.problems.map((p) => ({
      error_code: p.keyword === 'required' ? 'required_field' : p.keyword === 'enum' || p.keyword === 'const' ? 'unknown_value' : 'invalid_field',
      description: describe(p),
      // The contract: a body field's JSON pointer (`/` for the whole body), or `path.<name>` for a parameter.
      description_detail: p.location === 'body' || !p.location ? p.pointer || '/' : `${p.location}.${dotted(p.pointer)}`,
    }));
  }
  return { status: e.status, headers: e.headers, json: body };
}
