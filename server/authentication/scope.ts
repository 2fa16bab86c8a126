// The one scope the seed names. Seed quirk: documented as `digital-plataform:gateway-api`, granted
// as `digital-platform:gateway-api` in a sample. Both are accepted; the documented one is granted.

export const GATEWAY_SCOPE = 'digital-plataform:gateway-api';
const GATEWAY_SCOPE_SPELLINGS = new Set([GATEWAY_SCOPE, 'digital-platform:gateway-api']);

/** The scope granted for a requested one (space-separated, RFC 6749), or undefined when unknown. */
export function grantedScope(requested: string): string | undefined {
  const scopes = requested.split(' ').filter(Boolean);
  return scopes.length > 0 && scopes.every((s) => GATEWAY_SCOPE_SPELLINGS.has(s)) ? GATEWAY_SCOPE : undefined;
}

/** Whether a token's `scope` claim grants the gateway API. */
export function grantsGateway(scopeClaim: unknown): boolean {
  return typeof scopeClaim === 'string' && scopeClaim.split(' ').some((s) => GATEWAY_SCOPE_SPELLINGS.has(s));
}
