// Host name resolvers of the request-forgery tests, injected where the server would use dns.lookup:
// names answered from a table (as /etc/hosts would answer them), and a name that changes its answer
// after the first lookup (DNS rebinding).
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { HostResolver } from '../../../server/http/public-addresses.ts';

/** Public addresses (not in any special-purpose range) for names that must pass. */
export const PUBLIC_V4 = '93.184.215.14';
export const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

const answers = (addresses: string[]): LookupAddress[] => addresses.map((address) => ({ address, family: isIP(address) }));
const notFound = (hostname: string) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });

/** Answers the names of the table with every address listed; any other name is not found. Records each lookup. */
export function tableResolver(table: Record<string, string[]>): HostResolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    const addresses = table[hostname.toLowerCase().replace(/\.$/, '')];
    if (!addresses) throw notFound(hostname);
    return answers(addresses);
  };
  return Object.assign(resolve, { lookups });
}

/** Answers `first` to the first lookup of any name and `then` to every later one. */
export function rebindingResolver(first: string[], then: string[]): HostResolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    return answers(lookups.length === 1 ? first : then);
  };
  return Object.assign(resolve, { lookups });
}
