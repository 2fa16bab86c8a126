// Which addresses this server may send merchant notifications to when private addresses are not
// allowed: public ones only. A host name counts by every address it resolves to, checked when a URL is
// accepted and again by the connection's own lookup at each delivery, so that a name that changes
// its answer after the first check (DNS rebinding) reaches nothing but a public address.
import { promises as dns, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { HostResolver } from './host-resolver.ts';

export type { HostResolver };

/**
 * Not public (IANA special-purpose registries): this network, private, shared (CGNAT), loopback,
 * link-local, protocol assignments, documentation, benchmarking, 6to4 relay, multicast, reserved and
 * broadcast; IPv6 unspecified, loopback and IPv4-compatible (::/96), IPv4-translated
 * (::ffff:0:0:0/96, SIIT), NAT64 and 6to4 (they carry an IPv4 address), discard, protocol
 * assignments (Teredo), documentation (2001:db8::/32, and 3fff::/20 of RFC 9637), SRv6 segment
 * identifiers (5f00::/16, RFC 9602), unique local, link-local, site-local and multicast.
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked as its IPv4 address by BlockList itself.
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (no brackets; an IPv6 zone `%eth0` is ignored) is public. Anything else is not. */
export function isPublicAddress(address: string): boolean {
  const ip = address.replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** Every address of a host name, as a connection would resolve it; tests inject their own answers. */

/** The system's resolver (`/etc/hosts`, then DNS): dns.lookup with `all: true`. */
export const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true });

/** A host name that resolves to an address that is not public. */
export class NonPublicAddressError extends Error {
  readonly code = 'ERR_NON_PUBLIC_ADDRESS';
  constructor(hostname: string) {
    super(`${hostname} resolves to a loopback, private, link-local or reserved address`);
  }
}

/** The addresses of a host name, every one public, or a NonPublicAddressError (or the resolver's error). */
export async function publicAddressesOf(hostname: string, resolve: HostResolver): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname);
  if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) throw new NonPublicAddressError(hostname);
  return addresses;
}

/**
 * The `lookup` of a connection (an http.Agent's sockets): the host name resolved with `resolve` at
 * connect time, and, unless private addresses are allowed, refused when any address is not public,
 * so the connection fails before anything is sent.
 */
export function connectionLookup(resolve: HostResolver, allowPrivateAddresses: boolean): LookupFunction {
  return (hostname, options, callback) => {
    (allowPrivateAddresses ? resolve(hostname) : publicAddressesOf(hostname, resolve)).then(
      (all) => {
        const family = ({ 4: 4, 6: 6, IPv4: 4, IPv6: 6 } as Record<string, number>)[String(options.family)];
        const addresses = family ? all.filter((a) => a.family === family) : all;
        const [first] = addresses;
        if (!first) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, addresses);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
