// The merchant's notification URL is called by this server, so it is checked before it is stored:
// an http(s) URL without credentials in it, and, unless the sandbox allows it, not an address of
// this machine or of a private network (the server must not be turned against its own network).
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Loopback, private, link-local, shared (CGNAT) and unspecified ranges, IPv4 and IPv6. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
NON_PUBLIC.addAddress('::', 'ipv6');
NON_PUBLIC.addAddress('::1', 'ipv6');
NON_PUBLIC.addSubnet('fc00::', 7, 'ipv6'); // unique local
NON_PUBLIC.addSubnet('fe80::', 10, 'ipv6'); // link-local

/**
 * Whether a URL host names this machine or a non-public network: `localhost` (and `*.localhost`,
 * RFC 6761) or a literal address in the ranges above. IPv4-mapped IPv6 (`::ffff:127.0.0.1`, which
 * the URL parser writes `::ffff:7f00:1`) counts as its IPv4 address. Other host names are not
 * resolved here: what they point to can change after the check, so the sender checks at delivery.
 */
export function isLoopbackOrPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return NON_PUBLIC.check(host, 'ipv4');
  if (isIPv6(host)) return NON_PUBLIC.check(host, 'ipv6');
  return false;
}

/** What is wrong with a notification URL, or undefined when it may be stored. */
export function notificationUrlProblem(value: string, allowPrivateAddresses: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  // Credentials go in notification.user_credentials; in the URL they would leak into every log.
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(value)) {
    return 'must not contain credentials (user:password@); use notification.user_credentials';
  }
  if (!allowPrivateAddresses && isLoopbackOrPrivateHost(url.hostname)) {
    return 'must not point to a loopback, private or link-local address';
  }
  return undefined;
}
