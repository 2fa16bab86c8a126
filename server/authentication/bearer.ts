// Bearer authentication of protected operations: every rejection is a 401 in the area's shape
// (errors.ts), and the verified claims travel on the request.
import type { Request, RequestHandler } from 'express';
import { AccessTokenRejected, type AccessTokenClaims, type VerifyAccessToken } from './access-tokens.ts';
import { ApiError } from '../http/errors.ts';
import { recurrenceError } from '../http/recurrence-errors.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Claims of the verified bearer token, set by `requireAccessToken`. */
      accessToken?: AccessTokenClaims;
    }
  }
}

/** A seller id is a GUID (8-4-4-4-12 hex digits); the payment link API answers others with guid_error. */
export function isGuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/** 400 guid_error: the token's `x-seller-id` is not a GUID; `detail` is the area's wording of the problem. */
export const sellerGuidError = (detail: string) =>
  new ApiError(400, 'guid_error', 'The seller id must be a valid GUID', [{ location: 'token', pointer: '/x-seller-id', message: detail }]);

function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer +([^\s]+) *$/i.exec(header ?? '')?.[1];
}

/** RFC 6750 §3: a 401 names the scheme, and why the token was refused when there was one. */
function challenge(rejection: AccessTokenRejected): Record<string, string> {
  const realm = 'Bearer realm="payment-platform"';
  if (rejection.reason === 'missing') return { 'WWW-Authenticate': realm };
  const error = rejection.reason === 'insufficient_scope' ? 'insufficient_scope' : 'invalid_token';
  return { 'WWW-Authenticate': `${realm}, error="${error}", error_description="${rejection.message}"` };
}

export function requireAccessToken(verify: VerifyAccessToken): RequestHandler {
  return async (req, _res, next) => {
    try {
      req.accessToken = await verify(bearerToken(req.get('authorization')));
      next();
    } catch (error) {
      if (error instanceof AccessTokenRejected) return next(new ApiError(401, 'unauthorized', error.message, [], challenge(error)));
      next(error);
    }
  };
}

/** The claims of a request that went through `requireAccessToken` (a route without it is a bug). */
// Structural, so that handlers typed by the contract (numeric path params, typed query) can call it.
export function accessTokenOf(req: Pick<Request, 'accessToken' | 'method' | 'path'>): AccessTokenClaims {
  if (!req.accessToken) throw new Error(`${req.method} ${req.path} reads the access token without requireAccessToken`);
  return req.accessToken;
}

/**
 * The claims of a request of a recurrence area (subscription, plan, subscription webhook): there
 * too the seller id must be a GUID, or 400 in the area's error shape (the id is not echoed back).
 * This server issues no other kind of token; one signed elsewhere never reaches the SQL.
 */
export function recurrenceTokenOf(req: Pick<Request, 'accessToken' | 'method' | 'path'>): AccessTokenClaims {
  const token = accessTokenOf(req);
  if (!isGuid(token.sellerId)) throw recurrenceError(400, 'The seller id must be a valid GUID');
  return token;
}
