// The merchant's notification URL is called by this server, so it is checked before it is stored:
// an http(s) URL without credentials in it, and, unless the sandbox allows it, naming only public
// addresses (the server must not be turned against its own machine or network): a literal address
// as written, a host name by every address it resolves to. The sender checks again at each delivery.
import { isIP } from 'node:net';
import { isPublicAddress, publicAddressesOf, type HostResolver } from '../http/public-addresses.ts';
import { httpUrlOf, NOT_AN_HTTP_URL } from './http-url.ts';

export const NOT_PUBLIC = 'must not point to a loopback, private, link-local or reserved address';
export const NAME_NOT_PUBLIC = 'must have a host name that resolves to public addresses only';

/** The literal address of a URL host as `new URL()` writes it (`[::1]` → `::1`), or undefined for a name. */
const literalAddressOf = (hostname: string) => {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : undefined;
};

/**
 * Whether a URL host names this machine or a non-public network: `localhost` (and `*.localhost`,
 * RFC 6761) or a literal address that is not public (public-addresses.ts). The URL parser has
 * already written every spelling of an address the one way: `2130706433`, `0x7f.1` and `0177.0.0.1`
 * as `127.0.0.1`, `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`. Other host names are not resolved here.
 */
export function isLoopbackOrPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const address = literalAddressOf(host);
  return address !== undefined && !isPublicAddress(address);
}

/** What is wrong with a notification URL as written, or undefined when it may be stored (names unresolved). */
export function notificationUrlProblem(value: string, allowPrivateAddresses: boolean): string | undefined {
  const url = httpUrlOf(value);
  if (!url) return NOT_AN_HTTP_URL;
  // Credentials go in notification.user_credentials; in the URL they would leak into every log.
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(value)) {
    return 'must not contain credentials (user:password@); use notification.user_credentials';
  }
  if (!allowPrivateAddresses && isLoopbackOrPrivateHost(url.hostname)) return NOT_PUBLIC;
  return undefined;
}

/**
 * notificationUrlProblem, and, when private addresses are not allowed, the URL's host name resolved
 * with every address checked. A name that does not resolve is refused too (its addresses cannot be
 * checked), with the same message, so that the answer does not tell which names exist inside.
 */
export async function notificationUrlRefusal(value: string, options: { allowPrivateAddresses: boolean; resolve: HostResolver }): Promise<string | undefined> {
  const problem = notificationUrlProblem(value, options.allowPrivateAddresses);
  if (problem || options.allowPrivateAddresses) return problem;
  const { hostname } = new URL(value);
  if (literalAddressOf(hostname)) return undefined;
  return publicAddressesOf(hostname, options.resolve).then(
    () => undefined,
    () => NAME_NOT_PUBLIC,
  );
}
