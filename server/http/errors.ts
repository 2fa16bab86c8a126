// Every error body of the platform, in one place. Whatever goes wrong (a rule of an area, a request
// the validator refuses, a body the parser cannot read, a response that breaks the contract, a bug)
// becomes an ApiError, then the body of the request's area: the seed gives each area its own shape.
import type { ErrorRequestHandler, Request } from 'express';
import type { Logger } from 'pino';
import { areaOf, type Area } from './areas.ts';
import { NOT_TEXT, TEXT_PATTERN } from './text.ts';

/** Where a problem is: a part of the request, or a claim of its access token (`token`). */
export type ProblemLocation = 'body' | 'query' | 'path' | 'header' | 'cookie' | 'token';

/** One thing wrong with a request: where (a JSON pointer inside its location) and what. */
export interface Problem {
  location?: ProblemLocation;
  pointer: string;
  /** The JSON Schema keyword that failed (`required`, `const`, `enum`, ...), when known. */
  keyword?: string;
  message: string;
}

/** An error an area answers on purpose. `code` absent means the area's default code for the status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly problems: Problem[] = [],
    readonly headers: Record<string, string> = {},
    /** Extra members of the error body, for areas whose shape has them (recurrence: seller_id, combined_id, ...). */
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A response the handler built that the contract does not allow: a bug of the reference server. */
export class ContractViolation extends Error {
  constructor(
    readonly operation: string,
    readonly attemptedStatus: number,
    readonly violations: ReadonlyArray<{ path: string; message: string }>,
  ) {
    super(`Response of ${operation} (${attemptedStatus}) breaks the contract`);
    this.name = 'ContractViolation';
  }
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  413: 'Request body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  500: 'Internal server error',
  501: 'Not implemented',
  502: 'Service unavailable, try again later',
};
const statusMessage = (status: number) => STATUS_MESSAGES[status] ?? (status >= 500 ? STATUS_MESSAGES[500]! : 'Request failed');

/** A 400 for these problems: the area's shape decides the rest (web checkout: a 422 when nothing is missing). */
export const invalidRequest = (problems: Problem[]) => new ApiError(400, undefined, statusMessage(400), problems);

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  501: 'not_implemented',
};
const statusCode = (status: number) => STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');

const LOCATIONS: Record<string, ProblemLocation> = { body: 'body', query: 'query', params: 'path', headers: 'header', cookies: 'cookie' };

/** express-openapi-validator's `/body/customer/email` into a location and a pointer inside it. */
function problemOf(item: { path: string; message: string; errorCode?: string }): Problem {
  const [, first = '', ...rest] = item.path.split('/');
  const location = LOCATIONS[first];
  return {
    location,
    pointer: location ? (rest.length ? `/${rest.join('/')}` : '') : item.path,
    keyword: item.errorCode?.split('.')[0],
    // The contract's Text rule in words, not as the pattern that carries it.
    message: item.message === TEXT_RULE_BROKEN ? NOT_TEXT : item.message,
  };
}
const TEXT_RULE_BROKEN = `must match pattern "${TEXT_PATTERN}"`;

/**
 * The validator reports every broken rule (allErrors): keep one problem per field, the first, and
 * drop the `if` keyword's "must match then/else schema" echo of a conditional rule (its own
 * `required`/`not` problems say what is wrong).
 */
function oneProblemPerField(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.location}:${p.pointer}`;
    if (p.keyword === 'if' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

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

const BODY_PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'The request body is not valid JSON',
  'entity.too.large': 'Request body too large',
  'parameters.too.many': 'The request body has too many parameters',
  'encoding.unsupported': 'The request body encoding is not supported',
  'charset.unsupported': 'The request body charset is not supported',
};

interface ValidatorHttpError extends Error {
  status: number;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
  headers?: Record<string, string>;
}
const isValidatorError = (e: unknown): e is ValidatorHttpError =>
  e instanceof Error && typeof (e as ValidatorHttpError).status === 'number' && Array.isArray((e as ValidatorHttpError).errors);

/** http-errors raised by body-parser and the router (malformed JSON, too large, undecodable path). */
type ClientHttpError = Error & { status: number; expose: true; type?: string };
const isClientHttpError = (e: unknown): e is ClientHttpError =>
  e instanceof Error && (e as Partial<ClientHttpError>).expose === true && typeof (e as Partial<ClientHttpError>).status === 'number';

/**
 * The validator hands busboy's complaints about an unreadable multipart body (a client's fault) on
 * as 500s; these are their messages (found by contract fuzzing).
 */
const UNREADABLE_MULTIPART = /^(Unexpected end of form|Malformed part header|Unexpected field|Multipart: |Malformed urlencoded form)/;

/**
 * A number the schema allows but its column cannot hold: PostgreSQL's numeric_value_out_of_range, or
 * an integer JSON writes in exponent form (1e+308, a JSON Schema integer) that an integer column cannot read.
 */
const isOutOfRange = (e: unknown) => {
  const code = e instanceof Error ? (e as Error & { code?: unknown }).code : undefined;
  return code === '22003' || (code === '22P02' && /for type (smallint|integer|bigint)\b/.test((e as Error).message));
};

/** Any thrown value as an ApiError; anything unexpected is a 500 that reveals nothing. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ContractViolation) return new ApiError(500, undefined, statusMessage(500));
  if (isValidatorError(error) && error.status === 500 && error.errors.some((e) => UNREADABLE_MULTIPART.test(e.message))) {
    const message = 'The request body is not a readable multipart/form-data form';
    return new ApiError(400, undefined, message, [{ location: 'body', pointer: '', message }]);
  }
  if (isOutOfRange(error)) {
    // The contract sets no maximum on these integers; the store's columns do (32-bit counts).
    const message = 'A number in the request is larger than the platform accepts';
    return new ApiError(422, undefined, message, [{ location: 'body', pointer: '', message }]);
  }
  if (isValidatorError(error) && error.status < 500) {
    const problems = error.status === 400 ? oneProblemPerField(error.errors.map(problemOf)) : [];
    return new ApiError(error.status, undefined, statusMessage(error.status), problems, { ...error.headers });
  }
  if (isClientHttpError(error) && error.status >= 400 && error.status < 500) {
    const message = (error.type && BODY_PARSER_MESSAGES[error.type]) || statusMessage(error.status);
    // A JSON or form body in a charset or encoding the parser cannot read: the parser says 415, which no
    // operation with such a body documents (contract fuzzing); it is an unreadable body, so a 400.
    if (error.status === 415 && error.type) return new ApiError(400, undefined, message, [{ location: 'body', pointer: '', message }]);
    // An unreadable body is a problem with the body (400 details); a too large one is not.
    const problems: Problem[] = error.type && error.status === 400 ? [{ location: 'body', pointer: '', message }] : [];
    return new ApiError(error.status, undefined, message, problems);
  }
  return new ApiError(500, undefined, statusMessage(500));
}

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  /** `text/plain` only for the seed's plain-string 401 of payment intent creation. */
  text?: string;
  json?: unknown;
}

const isGrantTypeRefused = (p: Problem) => p.location === 'body' && p.pointer === '/grant_type' && p.keyword !== 'required';
const summary = (e: ApiError) => (e.problems.length && e.status === 400 ? e.problems.map(describe).join('; ') : e.message);

/** First token form: `{error_code, message, status_code}`; `status_code` equals the HTTP status. */
function tokenBodyCredentialsError(e: ApiError): RenderedError {
  const refused = e.problems.some(isGrantTypeRefused);
  const code = e.code ?? (refused ? 'unsupported_grant_type' : e.status === 401 ? 'invalid_credentials' : statusCode(e.status));
  const message = refused ? 'grant_type must be client_credentials' : summary(e);
  return { status: e.status, headers: e.headers, json: { error_code: code, message, status_code: e.status } };
}

/** Second token form: RFC 6749 `{error, error_description}`. */
function tokenBasicCredentialsError(e: ApiError): RenderedError {
  const refused = e.problems.some(isGrantTypeRefused);
  const error =
    e.code ?? (refused ? 'unsupported_grant_type' : e.status === 401 ? 'invalid_client' : e.status >= 500 ? 'server_error' : 'invalid_request');
  const description = refused ? 'grant_type must be client_credentials' : summary(e);
  // RFC 6749 §5.2: a 401 of the token endpoint names the scheme the client should use.
  const headers = e.status === 401 ? { ...e.headers, 'WWW-Authenticate': 'Basic realm="token"' } : e.headers;
  return { status: e.status, headers, json: { error, error_description: description } };
}

/** Payment link (and sandbox): `{error_code, message, status_code, details?}`, details on every 400. */
const IMAGE_UPLOAD = '/dpy/payment-link/v1/payment-links/products/images';

function paymentLinkError(e: ApiError, request: { method: string; path: string }): RenderedError {
  // The upload's size limit is enforced by the validator's multer (app.ts): its 413 is image_too_large.
  if (e.status === 413 && e.code === undefined && request.method === 'POST' && request.path === IMAGE_UPLOAD) {
    e = new ApiError(413, 'image_too_large', 'The image must not exceed 5 MiB (5242880 bytes)', [], e.headers);
  }
  const body: Record<string, unknown> = { error_code: e.code ?? statusCode(e.status), message: e.message, status_code: e.status };
  // The sandbox's 422 (a rule the schema cannot carry) names its fields too, when it has them.
  if (e.status === 400 || (e.status === 422 && e.problems.length)) {
    body.details = e.problems.map((p) => ({ message: describe(p), path: [p.location, dotted(p.pointer)].filter(Boolean).join('.') }));
  }
  return { status: e.status, headers: e.headers, json: body };
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
const PAYMENT_INTENT = '/dpy/web-checkout/v1/payment-intent';
/** A body that is not an object, or no body at all: something is missing, not a broken field. */
const isNotAnObject = (p: Problem) => p.location === 'body' && p.pointer === '' && (p.keyword === undefined || p.keyword === 'type');
/**
 * The web checkout contract's `not` rules in words (the validator only says "must NOT be valid"),
 * by the pointer of the refused object: present fields that break a rule, so 422.
 */
const WEB_CHECKOUT_NOT_RULES: Record<string, Omit<Problem, 'keyword'>> = {
  '': { location: 'body', pointer: '', message: 'payment and product must be omitted when configurations.card_verification is true' },
  '/configurations': { location: 'body', pointer: '/configurations', message: 'card_verification and preauthorization cannot both be true' },
};
const explainNot = (p: Problem): Problem => (p.keyword === 'not' && p.location === 'body' && WEB_CHECKOUT_NOT_RULES[p.pointer]) || p;

/**
 * Web checkout: `{code?, message, details}`. A validator refusal is a 400 `invalid_request` when
 * something is missing (or the body is not an object) and a 422 `validation_error` when a present
 * field breaks a rule (the area's decision). 500 carries `message` and `details` only.
 */
function webCheckoutError(e: ApiError, request: { method: string; path: string }): RenderedError {
  if (e.status === 401 && request.method === 'POST' && request.path === PAYMENT_INTENT) {
    return { status: 401, headers: e.headers, text: 'Unauthorized' }; // seed quirk: a plain string
  }
  // Contract: an absent body (or one that is not JSON) is a 400; the validator's 415 says the same.
  if (e.status === 415 && e.code === undefined) {
    const problem: Problem = { location: 'body', pointer: '', message: 'The request body must be a JSON object (Content-Type: application/json)' };
    e = new ApiError(400, 'invalid_request', problem.message, [problem], e.headers);
  }
  const details = e.problems.map(explainNot).map((p) => {
    const field = [p.location === 'body' ? undefined : p.location, dotted(p.pointer)].filter(Boolean).join('.');
    return field ? { field, message: describe(p) } : { message: describe(p) };
  });
  if (e.status >= 500) return { status: e.status, headers: e.headers, json: { message: e.message, details: [] } };
  let { status, code, message } = e;
  if (status === 400 && code === undefined && e.problems.length) {
    const missing = e.problems.some((p) => (p.keyword && WEB_CHECKOUT_MISSING.has(p.keyword)) || isNotAnObject(p));
    // The contract's texts replace the validator's generic one; a parser's own message (bad JSON) stays.
    const generic = message === STATUS_MESSAGES[400];
    [status, code, message] = missing
      ? [400, 'invalid_request', generic ? 'One or more required fields are missing' : message]
      : [422, 'validation_error', 'One or more fields failed validation'];
  }
  return { status, headers: e.headers, json: { code: code ?? WEB_CHECKOUT_CODES[status] ?? 'invalid_request', message, details } };
}

const RECURRENCE_MODULES = { subscription: 'be-subscription', plan: 'be-plan', 'subscription-webhook': 'dpm-webhooks' } as const;

/**
 * Subscription, plan and subscription webhook: `{message, name, status_code, details?}`. Messages
 * are the area's fixed texts, so a 401 says `Unauthorized` whatever the reason.
 */
function recurrenceError(e: ApiError, area: keyof typeof RECURRENCE_MODULES): RenderedError {
  const message = e.status === 401 || e.status === 429 ? statusMessage(e.status) : e.message;
  const body: Record<string, unknown> = { message, name: RECURRENCE_MODULES[area], status_code: e.status, ...e.fields };
  if (e.status === 400 && e.problems.length) {
    body.details = e.problems.map((p) => ({
      error_code: p.keyword === 'required' ? 'required_field' : p.keyword === 'enum' || p.keyword === 'const' ? 'unknown_value' : 'invalid_field',
      description: describe(p),
      // The contract: a body field's JSON pointer (`/` for the whole body), or `path.<name>` for a parameter.
      description_detail: p.location === 'body' || !p.location ? p.pointer || '/' : `${p.location}.${dotted(p.pointer)}`,
    }));
  }
  return { status: e.status, headers: e.headers, json: body };
}

/** What the request's operation documents, as the validator found it (absent outside the contract). */
export interface DocumentedOperation {
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, unknown> };
}

/**
 * A refusal the operation does not document, as the status it does document for the same fault
 * (found by contract fuzzing): a wrong Content-Type (the validator's 415) is an invalid request (400),
 * and a malformed parameter of an operation without 400 (the public short-id lookup) finds nothing (404).
 */
export function asDocumented(e: ApiError, operation: DocumentedOperation | undefined): ApiError {
  const responses = operation?.responses;
  if (!responses || e.status >= 500 || String(e.status) in responses) return e;
  if (e.status === 415 && '400' in responses) {
    const types = Object.keys(operation.requestBody?.content ?? {});
    const message =
      types.length === 1 && types[0] === 'application/json'
        ? 'The request body must be a JSON object (Content-Type: application/json)'
        : `The request body must be ${types.join(' or ') || 'absent'}`;
    return new ApiError(400, undefined, message, [{ location: 'body', pointer: '', message }], e.headers);
  }
  if (e.status === 400 && '404' in responses) return new ApiError(404, undefined, statusMessage(404), [], e.headers);
  if (e.status === 422 && '400' in responses) return new ApiError(400, e.code, e.message, e.problems, e.headers, e.fields);
  return e;
}

/** Any error as the body of the request's area. */
export function renderError(error: unknown, request: { method: string; path: string }, operation?: DocumentedOperation): RenderedError {
  const e = asDocumented(toApiError(error), operation);
  const area: Area = areaOf(request.path);
  switch (area) {
    case 'token-body-credentials':
      return tokenBodyCredentialsError(e);
    case 'token-basic-credentials':
      return tokenBasicCredentialsError(e);
    case 'web-checkout':
      return webCheckoutError(e, request);
    case 'subscription':
    case 'plan':
    case 'subscription-webhook':
      return recurrenceError(e, area);
    case 'payment-link':
    case 'sandbox':
    case 'outside': // package decision: paths outside every area answer in the payment link shape
      return paymentLinkError(e, request);
  }
}

/**
 * The one error handler: logs what is a bug (5xx, contract violations), never puts a stack trace in
 * a body, and answers in the area's shape.
 */
export function errorHandler(logger: Logger, routedOperation: (req: Request) => DocumentedOperation | undefined = () => undefined): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error); // too late for a body; Express ends the connection
    const log = req.log ?? logger;
    if (error instanceof ContractViolation) {
      log.error({ contractViolation: { operation: error.operation, status: error.attemptedStatus, violations: error.violations } }, error.message);
    } else if (toApiError(error).status >= 500) {
      log.error({ err: error }, 'Unexpected error');
    }
    // The validator's operation; else the one security routed to (the validator refuses a path
    // parameter that does not decode, `%`, before it names the operation).
    const operation = (req as { openapi?: { schema?: DocumentedOperation } }).openapi?.schema ?? routedOperation(req);
    const rendered = renderError(error, { method: req.method, path: req.path }, operation);
    res.status(rendered.status).set(rendered.headers);
    if (rendered.text !== undefined) res.type('text/plain').send(rendered.text);
    else res.json(rendered.json);
  };
}
