// The authentication area assembled: it issues tokens, and gives every other area the verifier.
import type { Store } from '../store/store.ts';
import { accessTokens, type VerifyAccessToken } from './access-tokens.ts';
import { loadSigningKeys } from './keys.ts';
import { authenticationRepository } from './repository.ts';
import { authenticationRoutes } from './routes.ts';
import { authenticationService } from './service.ts';

export async function createAuthentication(store: Store, issuer: string) {
  const repository = authenticationRepository(store);
  const keys = await loadSigningKeys(repository);
  const tokens = accessTokens(keys, issuer);
  const verifyAccessToken: VerifyAccessToken = tokens.verify;
  return { routes: authenticationRoutes(authenticationService(repository, tokens), keys), verifyAccessToken, tokens, keys };
}
