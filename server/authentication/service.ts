// The rules of the token endpoints. Request shape (required fields, grant_type) is checked by the
// validator against the contract before we get here; what is left is scope and credentials.
import { parseBasicCredentials, usesBasicScheme } from '../http/basic-credentials.ts';
import { ApiError } from '../http/errors.ts';
import { addressKey } from '../http/rate-limit.ts';
import type { AccessTokens, IssuedAccessToken } from './access-tokens.ts';
import type { AuthenticationRepository } from './repository.ts';
import { GATEWAY_SCOPE, grantedScope } from './scope.ts';
import { failedAttempts, type FailedAttempts } from './failed-attempts.ts';
import { HashingBusy, hashingSlots, type HashingSlots } from './hashing-slots.ts';
import { hashForUnknownClient, STORED_COST, verifyClientSecret, type HashCost } from './secrets.ts';
import { trustedAddresses, type TrustedAddresses } from './trusted-addresses.ts';
import { verifiedSecrets, type SecretVerifier, type VerifiedSecrets } from './verified-secrets.ts';

const INVALID_CREDENTIALS = 'Invalid client credentials';
/** RFC 6749, section 2.3: a client uses one authentication method per request, never two. */
const ONE_METHOD = 'Send the client credentials in the form body or in a Basic Authorization header, not in both (RFC 6749, section 2.3)';

/** Every hashing slot taken and the line full (a flood): the caller may retry in a second. */
const hashingBusy = () =>
  new ApiError(429, 'too_many_requests', 'Too many token requests are being checked at once, retry after the time in Retry-After', [], { 'Retry-After': '1' });

export interface AuthenticationServiceOptions {
  secrets?: VerifiedSecrets;
  /** Failed attempts per client id and caller address (off unless given). */
  attempts?: FailedAttempts;
  /** Failed attempts per client id from every address together, a higher ceiling (off unless given). */
  clientAttempts?: FailedAttempts;
  slots?: HashingSlots;
  /** Client id and address pairs that got a token lately: the ceiling from every address spares them. */
  trusted?: TrustedAddresses;
  /** The cost of the store's hashes (hashCostOf): an unknown client id is checked against a hash of that cost. */
  hashCost?: HashCost;
}

export function authenticationService(
  repository: AuthenticationRepository,
  tokens: AccessTokens,
  {
    secrets = verifiedSecrets(),
    attempts = failedAttempts({ limit: 0, windowMs: 0 }),
    clientAttempts = failedAttempts({ limit: 0, windowMs: 0 }),
    slots = hashingSlots(),
    trusted = trustedAddresses(),
    hashCost = STORED_COST,
  }: AuthenticationServiceOptions = {},
) {
  /**
   * The two counts a guess goes to: its client id from its address (`here`: `address` is the
   * caller's /64, so that a neighbour's network cannot lock it out), and its client id from anywhere.
   */
  type Counted = { here: string; anywhere: string; id: string; address: string };
  const assertAllowed = ({ here, anywhere, id, address }: Counted) => {
    attempts.assertAllowed(here);
    // An address that got a token for this client id lately is its owner's: guesses from elsewhere
    // cannot lock it out (its own wrong secrets still count, here and in the ceiling).
    if (!trusted.has(id, address)) clientAttempts.assertAllowed(anywhere);
  };
  /**
   * scrypt in a bounded slot, in the turn of the caller's network (its /56, hashing-slots.ts). The throttle is checked again once the slot is
   * free, and a failure counted before the slot is handed on: guesses that waited in line while
   * their client id got throttled are refused unchecked, so no more than the limit are ever hashed.
   */
  const boundedVerifier =
    (counted: Counted, network: string): SecretVerifier =>
    (secret, stored) =>
      slots.run(async () => {
        assertAllowed(counted);
        const matches = await verifyClientSecret(secret, stored);
        if (!matches) {
          attempts.recordFailure(counted.here);
          clientAttempts.recordFailure(counted.anywhere);
        }
        return matches;
      }, network);

  /**
   * The API client when the secret matches. A throttled client id is refused first, whatever the
   * secret (failed-attempts.ts). A known client's correct secret is scrypt-checked once per process
   * (see verified-secrets.ts); a wrong secret, or an unknown client id (checked against the dummy
   * hash, never remembered), always costs one scrypt, so timing reveals nothing.
   */
  async function authenticate(clientId: string, clientSecret: string, ip: string) {
    // Counted per client id and caller's address: someone who knows a client id (they are not
    // secret) cannot lock its owner out from one or a few other addresses; and per client id from
    // anywhere, under a higher ceiling (ten times), so that many addresses do not multiply the
    // guesses. The ceiling is the trade-off: from ten or more addresses, whoever knows a client id
    // can refuse its new tokens a minute at a time to addresses that have not got one for it in the
    // last 24 hours (the contract says so). A client id is counted by its first 256 characters (the
    // Basic form does not bound it).
    const id = clientId.slice(0, 256);
    const address = addressKey(ip, 64);
    const counted: Counted = { here: `${id}\n${address}`, anywhere: id, id, address };
    assertAllowed(counted);
    const client = await repository.findApiClient(clientId);
    let matches: boolean;
    try {
      matches = await secrets.verify(clientSecret, client?.secretHash ?? (await hashForUnknownClient(hashCost)), { slow: boundedVerifier(counted, addressKey(ip)), clientId });
    } catch (error) {
      if (error instanceof HashingBusy) throw hashingBusy();
      throw error;
    }
    if (!client || !matches) return undefined; // the failure is counted (boundedVerifier)
    attempts.recordSuccess(counted.here); // the count from anywhere stays: the owner's success does not renew a guesser's budget
    trusted.add(id, address);
    return client;
  }

  return {
    /** First form: credentials and scope in the form body. */
    async issueForBodyCredentials(body: { client_id: string; client_secret: string; scope: string }, ip: string, authorization?: string): Promise<IssuedAccessToken> {
      if (usesBasicScheme(authorization)) throw new ApiError(400, 'invalid_request', ONE_METHOD);
      if (!grantedScope(body.scope)) {
        throw new ApiError(400, 'invalid_scope', `scope must be ${GATEWAY_SCOPE}`);
      }
      const client = await authenticate(body.client_id, body.client_secret, ip);
      if (!client) throw new ApiError(401, 'invalid_credentials', INVALID_CREDENTIALS);
      return tokens.issue(client);
    },

    /** Second form: credentials in a Basic header; the gateway scope is granted (package decision). */
    async issueForBasicCredentials(authorization: string | undefined, ip: string, body: Record<string, unknown> = {}): Promise<IssuedAccessToken> {
      const credentials = parseBasicCredentials(authorization);
      // Basic credentials, even malformed ones, and a secret in the body too, or another client id
      // there, are two methods; the body's client_id may repeat the header's.
      if (usesBasicScheme(authorization) && (body.client_secret !== undefined || (body.client_id !== undefined && body.client_id !== credentials?.clientId))) {
        throw new ApiError(400, 'invalid_request', ONE_METHOD);
      }
      if (!credentials) throw new ApiError(401, 'invalid_client', 'Missing or malformed Basic credentials');
      const client = await authenticate(credentials.clientId, credentials.clientSecret, ip);
      if (!client) throw new ApiError(401, 'invalid_client', INVALID_CREDENTIALS);
      return tokens.issue(client);
    },
  };
}

export type AuthenticationService = ReturnType<typeof authenticationService>;
