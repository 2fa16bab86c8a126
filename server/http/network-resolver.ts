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
import { readFile, stat } from 'node:fs/promises';
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

/** The hosts file (lines `address name alias...`, `#` comments) as name → addresses. */
function parseHosts(text: string): Map<string, LookupAddress[]> {
  const names = new Map<string, LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (!family) continue;
    for (const alias of aliases) {
      const key = alias.toLowerCase().replace(/\.$/, '');
      names.set(key, [...(names.get(key) ?? []), { address: address!, family }]);
    }
  }
  return names;
}

/**
 * The addresses a hosts file gives a name, parsed once per version of the file (its modification
 * time and size): a hosts file of blocking lists holds hundreds of thousands of lines.
 */
function hostsFileReader(file: string) {
  let parsed: { version: string; names: Map<string, LookupAddress[]> } | undefined;
  return async (name: string): Promise<LookupAddress[]> => {
    const info = await stat(file).catch(() => undefined);
    const version = info ? `${info.mtimeMs}:${info.size}` : 'none';
    if (parsed?.version !== version) parsed = { version, names: info ? parseHosts(await readFile(file, 'utf8').catch(() => '')) : new Map() };
    return parsed.names.get(name) ?? [];
  };
}

export function networkResolver(options: NetworkResolverOptions = {}): HostResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  const fromHostsFile = hostsFileReader(options.hostsFile ?? '/etc/hosts');
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return LOOPBACK;
    const listed = await fromHostsFile(name);
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
