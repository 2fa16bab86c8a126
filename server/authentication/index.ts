// The authentication area assembled: it issues tokens, and gives every other area the verifier.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Store } from '../store/store.ts';
import { accessTokens, ACCESS_TOKEN_LIFETIME_SECONDS, IAT_SKEW_SECONDS, type VerifyAccessToken } from './access-tokens.ts';
import { failedAttempts } from './failed-attempts.ts';
import { SIGNING_KEYS_REFRESH_MS, signingKeyRing } from './keys.ts';
import { authenticationRepository } from './repository.ts';
import { authenticationRoutes } from './routes.ts';
import { ownOrigins } from '../http/other-sites.ts';
import { hashCostOf } from './secrets.ts';
import { authenticationService } from './service.ts';

/**
 * A retired signing key stays published until every token it signed has expired: a token's
 * lifetime, plus the time another instance may still sign with it before it sees the rotation, plus
 * clock skew.
 */
export const RETIRED_KEY_PUBLISHED_MS = (ACCESS_TOKEN_LIFETIME_SECONDS + IAT_SKEW_SECONDS) * 1000 + SIGNING_KEYS_REFRESH_MS;

/** Wrong secrets for one client id from every address together, as a multiple of the limit per address. */
export const CLIENT_CEILING_FACTOR = 10;

export async function createAuthentication(store: Store, config: Pick<Config, 'issuer' | 'tokenFailedAttempts' | 'publicBaseUrl'>, logger?: Logger) {
  const keys = await signingKeyRing(
    store,
    { retiredKeyPublishedMs: RETIRED_KEY_PUBLISHED_MS },
    (error) =>
      logger?.warn(
        { error: error.message },
        'The token signing keys could not be read again: this instance signs and verifies with the keys it read last (a rotation made by another instance is not seen) and tries again at the next refresh (every 30 s, or a second after a token with an unknown kid)',
      ),
    () => logger?.info('The token signing keys are read again'),
  );
  const tokens = accessTokens(keys, config.issuer);
  const verifyAccessToken: VerifyAccessToken = tokens.verify;
  const attempts = failedAttempts(config.tokenFailedAttempts);
  const { limit, windowMs } = config.tokenFailedAttempts;
  const clientAttempts = failedAttempts({ limit: limit * CLIENT_CEILING_FACTOR, windowMs });
  const service = authenticationService(authenticationRepository(store), tokens, { attempts, clientAttempts, hashCost: hashCostOf(store) });
  const forgetFailedAttempts = () => {
    attempts.clear();
    clientAttempts.clear();
  };
  return { routes: authenticationRoutes(service, keys, ownOrigins(config.publicBaseUrl)), verifyAccessToken, tokens, keys, forgetFailedAttempts };
}
