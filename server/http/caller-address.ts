// The caller's address, in one spelling: the connection's, or the one a trusted proxy names
// (TRUST_PROXY). Apart from rate-limit.ts, which counts by it, so that the request log, loaded with
// the package, does not load the rate limiter's modules with it.
import type { Request } from 'express';
import { isIP, SocketAddress } from 'node:net';

/**
 * An address in one spelling: IPv6 in its canonical form (lower case, zeros compressed), an
 * IPv4-mapped IPv6 address as its IPv4 address, an IPv6 zone id left out (`fe80::1%eth0` is
 * `fe80::1`: a zone of any length would make the same address a new text each time). Undefined
 * for what is not an address.
 */
export function canonicalIp(given: string | undefined): string | undefined {
  if (given === undefined) return undefined;
  const zone = given.indexOf('%');
  const value = zone === -1 ? given : given.slice(0, zone);
  if (zone !== -1 && isIP(value) !== 6) return undefined;
  const family = isIP(value);
  if (family === 4) return value;
  if (family !== 6) return undefined;
  const canonical = new SocketAddress({ address: value, family: 'ipv6' }).address;
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical)?.[1] ?? canonical;
}

/**
 * The caller's address (canonicalIp): the connection's, or the one a trusted proxy's
 * X-Forwarded-For names (TRUST_PROXY), when that is an address at all; a proxy may forward
 * `unknown`, `ip:port` or any text, which would otherwise be a key of any length, a new one each time.
 */
export const callerIp = (req: Request): string => canonicalIp(req.ip) ?? canonicalIp(req.socket.remoteAddress) ?? '0.0.0.0';
