// The authentication area assembled: it issues tokens, and gives every other area the verifier.
import type { Config } from '../config.ts';
import type { Store } from '../store/store.ts';
import { accessTokens, type VerifyAccessToken } from './access-tokens.ts';
import { failedAttempts } from './failed-attempts.ts';
import { loadSigningKeys } from './keys.ts';
import { authenticationRepository } from './repository.ts';
import { authenticationRoutes } from './routes.ts';
import { authenticationService } from './service.ts';

export async function createAuthentication(store: Store, config: Pick<Config, 'issuer' | 'tokenFailedAttempts'>) {
  const repository = authenticationRepository(store);
  const keys = await loadSigningKeys(repository);
  const tokens = accessTokens(keys, config.issuer);
  const verifyAccessToken: VerifyAccessToken = tokens.verify;
  const service = authenticationService(repository, tokens, { attempts: failedAttempts(config.tokenFailedAttempts) });
  return { routes: authenticationRoutes(service, keys), verifyAccessToken, tokens, keys };
}
