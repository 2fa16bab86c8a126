// The errors of the platform: what an area throws on purpose (ApiError, with the problems of the
// request), a response that breaks the contract (ContractViolation), and the status vocabulary.
// Normalising any thrown value: error-normalising.ts; bodies per area: error-renderers.ts (the
// area's rules: server/error-bodies.ts); the Express handler: error-handler.ts.

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

/**
 * The most problems an error answer names, the first found: a small body of many broken fields
 * (under unknown members, or in nested arrays) was answered with up to 200 MB, one detail per field,
 * and ran the process out of memory (attacker reviews, 2026-11-24).
 */
export const MAX_PROBLEMS = 20;

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
export const statusMessage = (status: number) => STATUS_MESSAGES[status] ?? (status >= 500 ? STATUS_MESSAGES[500]! : 'Request failed');

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
export const statusCode = (status: number) => STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
