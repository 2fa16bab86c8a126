// Host names resolved without libuv's thread pool, for a sandbox that others reach (private
// notification URLs refused). dns.lookup runs the system's getaddrinfo on that pool, at most two at a
// time, and a name whose name server never answers holds its thread until the system gives up; two
// sellers with such names (a domain of theirs, or a dead name server) would stall every other
// seller's lookups, whatever their turns (fair-lookups.ts). Node's own DNS client (c-ares, the
// `dns.Resolver` of node:dns) asks the name servers of /etc/resolv.conf on the event loop, any
// number at once, each question bounded by its timeout and tries. It does not read /etc/hosts, so the
// hosts file is read first, as getaddrinfo would, and `localhost` names are loopback (RFC 6761).
import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { HostResolver } from './host-resolver.ts';

export interface NetworkResolverOptions {
  /** The hosts file read before DNS (/etc/hosts). */
  hostsFile?: string;
  /** Name servers (`127.0.0.1:5353`); the system's (/etc/resolv.conf) by default. */
  servers?: string[];
  /** Per question, and how many times it is asked (c-ares' timeout and tries). */
  timeoutMs?: number;
  tries?: number;
}

const LOOPBACK: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** The addresses the hosts file gives `name` (lines `address name alias...`, `#` comments). */
async function fromHostsFile(file: string, name: string): Promise<LookupAddress[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const found: LookupAddress[] = [];
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (family && names.some((n) => n.toLowerCase().replace(/\.$/, '') === name)) found.push({ address: address!, family });
  }
  return found;
}

export function networkResolver(options: NetworkResolverOptions = {}): HostResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  const hostsFile = options.hostsFile ?? '/etc/hosts';
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return LOOPBACK;
    const listed = await fromHostsFile(hostsFile, name);
    if (listed.length) return listed;
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length) return addresses;
    const failure = v4.status === 'rejected' ? (v4.reason as NodeJS.ErrnoException) : undefined;
    throw Object.assign(new Error(`${hostname} did not resolve${failure?.code ? ` (${failure.code})` : ''}`), { code: failure?.code ?? 'ENOTFOUND' });
  };
}
