// Any thrown value as an ApiError: the validator's refusals (one problem per field), the body
// parser's and router's http-errors, busboy's complaints, SQL numbers out of range; then the status
// remapping to what the operation documents.
import { ApiError, ContractViolation, MAX_PROBLEMS, statusMessage, type Problem, type ProblemLocation } from './errors.ts';
import { MAX_JSON_ARRAY_ITEMS, MAX_JSON_DEPTH, MAX_JSON_OBJECT_MEMBERS, MAX_JSON_VALUES } from './body-parsers.ts';
import { MULTIPART_LIMIT_MESSAGES } from './multipart-limits.ts';
import { NOT_TEXT, TEXT_PATTERN } from './text.ts';
import { allowingHead } from './head-requests.ts';

const LOCATIONS: Record<string, ProblemLocation> = { body: 'body', query: 'query', params: 'path', headers: 'header', cookies: 'cookie' };

/** express-openapi-validator's `/body/customer/email` into a location and a pointer inside it. */
function problemOf(item: { path: string; message: string; errorCode?: string }): Problem {
  const [, first = '', ...rest] = item.path.split('/');
  const location = LOCATIONS[first];
  return {
    location,
    pointer: location ? (rest.length ? `/${rest.join('/')}` : '') : item.path,
    keyword: item.errorCode?.split('.')[0],
    // The contract's Text rule in words, not as the pattern that carries it; the validator's
    // undecodable-path message without its stray quote.
    message: item.message === TEXT_RULE_BROKEN ? NOT_TEXT : item.message === MALFORMED_URI ? 'malformed uri' : item.message,
  };
}
const TEXT_RULE_BROKEN = `must match pattern "${TEXT_PATTERN}"`;
const MALFORMED_URI = "malformed uri'";

/**
 * The validator reports every broken rule (allErrors): keep one problem per field, the first, and
 * drop the `if` keyword's "must match then/else schema" echo of a conditional rule (its own
 * `required`/`not` problems say what is wrong); at most MAX_PROBLEMS of them: 1 MB of nested arrays
 * of wrong items (420 brands of 1,199 currencies) was answered with 64 MB naming ~500,000 fields.
 */
function oneProblemPerField(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  const kept: Problem[] = [];
  for (const p of problems) {
    const key = `${p.location}:${p.pointer}`;
    if (p.keyword === 'if' || seen.has(key)) continue;
    seen.add(key);
    kept.push(p);
    if (kept.length === MAX_PROBLEMS) break;
  }
  return kept;
}

const BODY_PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'The request body is not valid JSON',
  'entity.too.large': 'Request body too large',
  'entity.too.deep': `The request body nests deeper than ${MAX_JSON_DEPTH} levels`,
  'entity.too.many.items': `The request body has an array of more than ${MAX_JSON_ARRAY_ITEMS} items`,
  'entity.too.many.members': `The request body has an object of more than ${MAX_JSON_OBJECT_MEMBERS} members`,
  'entity.too.many.values': `The request body has more than ${MAX_JSON_VALUES} members and items in all`,
  'entity.number.range': 'The request body has a number beyond the range of a 64-bit float (about ±1.8e308)',
  'parameters.too.many': 'The request body has too many parameters',
  'encoding.unsupported': 'The request body must not be compressed (a Content-Encoding other than identity is not read)',
  'charset.unsupported': 'The request body charset is not supported',
  'length.required': 'A request body must be sent with its Content-Length (a chunked body is not read)',
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
  // The validator says 413 for too many files or parts, as for a file too large: that is a form's shape (400), not its size.
  const limitBroken = isValidatorError(error) && (error.status === 400 || error.status === 413) && MULTIPART_LIMIT_MESSAGES[error.errors[0]?.message ?? ''];
  if (limitBroken) return new ApiError(400, undefined, limitBroken, [{ location: 'body', pointer: '', message: limitBroken }]);
  if (isValidatorError(error) && error.status < 500) {
    const problems = error.status === 400 ? oneProblemPerField(error.errors.map(problemOf)) : [];
    return new ApiError(error.status, undefined, statusMessage(error.status), problems, allowingHead({ ...error.headers }));
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
  // Its problems stay (a 404 renders none): an area may tell a refused path value from the rest.
  if (e.status === 400 && '404' in responses) return new ApiError(404, undefined, statusMessage(404), e.problems, e.headers);
  if (e.status === 422 && '400' in responses) return new ApiError(400, e.code, e.message, e.problems, e.headers, e.fields);
  return e;
}
