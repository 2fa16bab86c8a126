// Authentication as the contract declares it, before anything else: each documented operation's
// security scheme decides who may call it, so a caller without valid credentials gets the 401 of
// its area whatever else is wrong with the request (the contract checks 401 first). The operation
// is found exactly as the routers find it (operations.ts) and recorded on the request; each route
// runs only for the operation it was registered for (typed-router.ts). Routes only read the
// verified claims (`accessTokenOf`); the rule of who needs what lives in the contract.
import type { RequestHandler } from 'express';
import type { PlatformDocument } from './contract.ts';
import { ApiError } from './errors.ts';
import { operationMatcher, type RoutedOperation } from './operations.ts';

/** One handler per security scheme name of the contract (`oauth2`, `sandboxAdmin`, ...). */
export type SchemeHandlers = Record<string, RequestHandler>;

/**
 * `referenceOnly`: operations the server answers whatever bundle it enforces (the key set), public
 * when the bundle does not document them.
 */
export function authenticateByContract(apiSpec: PlatformDocument, handlers: SchemeHandlers, referenceOnly: RoutedOperation[] = []): RequestHandler {
  const { find, methodsOf, operations } = operationMatcher(apiSpec, referenceOnly);
  // Fail closed: a secured operation whose scheme has no handler would otherwise be public.
  const unguarded = operations.filter((op) => op.schemes.length > 0 && !op.schemes.some((name) => name in handlers));
  if (unguarded.length) throw new Error(`No handler for the security of ${unguarded.map((op) => `${op.method} ${op.template} (${op.schemes})`).join(', ')}`);
  return (req, res, next) => {
    req.operation = find(req.method, req.path);
    // A path no operation has, in this exact spelling, is a 404 before anything reads the request:
    // the validator would match other spellings (it ignores `strict routing`) and answer for them.
    if (!req.operation && methodsOf(req.path).length === 0) return next(new ApiError(404, undefined, 'Not found'));
    const scheme = req.operation?.schemes.find((name) => name in handlers);
    if (!scheme) return next(); // public, or a documented path with another method (the validator's 405)
    handlers[scheme]!(req, res, next);
  };
}
