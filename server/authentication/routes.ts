// HTTP ↔ domain for the token endpoints, plus the reference-only JWKS and signing key rotation (the
// sandbox admin token is checked before this router, as the contract's security says).
import type { RequestHandler } from 'express';
import { callerIp } from '../http/caller-address.ts';
import { ApiError } from '../http/errors.ts';
import { fromAnotherSite } from '../http/other-sites.ts';
import { typedRouter } from '../http/typed-router.ts';
import type { IssuedAccessToken } from './access-tokens.ts';
import type { SigningKeyRing } from './keys.ts';
import type { AuthenticationService } from './service.ts';

export const FROM_ANOTHER_SITE =
  'A token is not issued to a web page of another site: client credentials belong to a server, not to a browser page.';

/**
 * A token request a browser sent from a page of another site (http/other-sites.ts): a form post or a
 * no-cors fetch needs no preflight, so any page the developer visits could send wrong secrets for a
 * client id from the developer's own address, and lock its owner out of the token endpoints there,
 * or fill the secret checks' places (attacker review, 2026-11-24). Refused before the credentials
 * are read, so nothing is counted or hashed. No browser page has a use for the answer: the sandbox
 * sends no CORS headers.
 */
const refuseOtherSites =
  (origins: (host: string | undefined) => string[]): RequestHandler =>
  (req, _res, next) =>
    next(fromAnotherSite(req, origins) ? new ApiError(400, 'invalid_request', FROM_ANOTHER_SITE) : undefined);

/** RFC 6749 §5.1: token responses must not be cached. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  next();
};

const tokenBody = (issued: IssuedAccessToken) => ({
  access_token: issued.accessToken,
  token_type: 'Bearer' as const,
  expires_in: issued.expiresIn,
  scope: issued.scope,
});

export function authenticationRoutes(service: AuthenticationService, keys: SigningKeyRing, origins: (host: string | undefined) => string[]) {
  const browserPagesRefused = refuseOtherSites(origins);
  const api = typedRouter()
    .post('/authentication/oauth2/-core/access_token', noStore, browserPagesRefused, async (req, res) => {
      res.json(tokenBody(await service.issueForBodyCredentials(req.body, callerIp(req), req.get('authorization'))));
    })
    .post('/authentication/oauth2/access_token', noStore, browserPagesRefused, async (req, res) => {
      res.json(tokenBody(await service.issueForBasicCredentials(req.get('authorization'), callerIp(req), req.body)));
    });
  // Reference-only (sandbox area): the public keys that verify access tokens, and their rotation.
  api.get('/sandbox/v1/jwks', async (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json((await keys.current()).jwks);
  });
  api.post('/sandbox/v1/signing-keys/rotate', async (req, res) => {
    const rotation = await keys.rotate({ revoke: req.query.revoke === true });
    res.json({
      kid: rotation.kid,
      ...(rotation.previousKid !== undefined && { previous_kid: rotation.previousKid }),
      previous_key_published_until: rotation.previousPublishedUntil.toISOString(),
    });
  });
  return api.router;
}
