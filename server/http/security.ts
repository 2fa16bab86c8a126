// Authentication as the contract declares it, before anything else: each documented operation's
// security scheme decides who may call it, so a caller without valid credentials gets the 401 of
// its area whatever else is wrong with the request (the contract checks 401 first). Routes only
// read the verified claims (`accessTokenOf`); the rule of who needs what lives in the contract.
import type { RequestHandler } from 'express';
import { routesOf, type PlatformDocument } from '../../client/contract.ts';

/** One handler per security scheme name of the contract (`oauth2`, `sandboxAdmin`, ...). */
export type SchemeHandlers = Record<string, RequestHandler>;

export function authenticateByContract(apiSpec: PlatformDocument, handlers: SchemeHandlers): RequestHandler {
  const routes = routesOf(apiSpec);
  return (req, res, next) => {
    const route = routes.find((r) => r.method === req.method && r.exact.test(req.path));
    const scheme = route?.schemes.find((name) => name in handlers);
    if (!scheme) return next(); // public, undocumented (a 404 later), or checked by its own service (token endpoints)
    handlers[scheme]!(req, res, next);
  };
}
