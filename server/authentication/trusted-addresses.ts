// The addresses that got a token for a client id lately: the token endpoints' ceiling per client id
// (failed attempts from every address together) spares them, so that guesses from elsewhere cannot
// lock the owner out (service.ts).
import { LRUCache } from 'lru-cache';

/** How long an address that got a token for a client id stays spared by that client id's ceiling. */
export const TRUSTED_ADDRESS_MS = 24 * 60 * 60 * 1000;
/**
 * Addresses remembered per client id (past it, its least recently trusted goes), and client ids at
 * once (past it, the least recently used). Per client id, so that one client's tokens from ever new
 * addresses push out its own, never another client's (an attacker review filled a shared list).
 */
export const MAX_TRUSTED_PER_CLIENT = 16;
export const MAX_TRUSTED_CLIENTS = 10_000;

/** The addresses that got a token for a client id lately. */
export interface TrustedAddresses {
  has(clientId: string, address: string): boolean;
  add(clientId: string, address: string): void;
}

export function trustedAddresses(now: () => number = Date.now): TrustedAddresses {
  // Per client id: address -> when it last got a token, oldest first.
  const clients = new LRUCache<string, Map<string, number>>({ max: MAX_TRUSTED_CLIENTS, ttl: TRUSTED_ADDRESS_MS });
  return {
    has(clientId, address) {
      const at = clients.get(clientId)?.get(address);
      return at !== undefined && now() - at < TRUSTED_ADDRESS_MS;
    },
    add(clientId, address) {
      const addresses = clients.get(clientId) ?? new Map<string, number>();
      addresses.delete(address);
      addresses.set(address, now());
      if (addresses.size > MAX_TRUSTED_PER_CLIENT) addresses.delete(addresses.keys().next().value!);
      clients.set(clientId, addresses); // its 24 hours start again
    },
  };
}
