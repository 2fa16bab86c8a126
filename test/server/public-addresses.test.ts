// The request-forgery rule of notification delivery: which addresses are public (every spelling of
// an address included), a host name judged by every address it resolves to, and the connection
// lookup that checks the address actually connected to, on a real socket.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionLookup, isPublicAddress, NonPublicAddressError, publicAddressesOf } from '../../server/http/public-addresses.ts';
import { PUBLIC_V4, PUBLIC_V6, rebindingResolver, tableResolver } from './support/resolvers.ts';

describe('isPublicAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified IPv4'],
    ['0.1.2.3', 'this network 0/8'],
    ['10.20.30.40', 'private 10/8'],
    ['100.64.0.1', 'shared (CGNAT) 100.64/10'],
    ['100.127.255.254', 'shared (CGNAT) 100.64/10, top'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback 127/8, top'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.254', 'private 172.16/12, top'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.10', 'documentation'],
    ['192.168.1.1', 'private 192.168/16'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast, top'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified IPv6'],
    ['::1', 'IPv6 loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped loopback, uncompressed'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated loopback (SIIT)'],
    ['::ffff:0:808:808', 'IPv4-translated, of a public address too'],
    ['64:ff9b::7f00:1', 'NAT64 of a loopback address'],
    ['2002:7f00:1::1', '6to4 of a loopback address'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation 3fff::/20 (RFC 9637)'],
    ['3fff:fff:ffff::1', 'documentation 3fff::/20, top'],
    ['5f00::1', 'SRv6 segment identifiers 5f00::/16 (RFC 9602)'],
    ['fc00::1', 'unique local fc00::/7'],
    ['fdff:ffff::1', 'unique local fc00::/7, top'],
    ['fe80::1', 'link-local fe80::/10'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf::1', 'link-local fe80::/10, top'],
    ['ff02::1', 'multicast'],
    ['merchant.example', 'not an address at all'],
    ['', 'empty'],
  ])('%s is not public (%s)', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each([
    [PUBLIC_V4, 'public IPv4'],
    ['8.8.8.8', 'public IPv4'],
    ['100.63.255.255', 'just below 100.64/10'],
    ['172.32.0.1', 'just above 172.16/12'],
    ['223.255.255.254', 'just below multicast'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public address'],
    [PUBLIC_V6, 'public IPv6'],
    ['2001:4860:4860::8888', 'public IPv6 in 2001::/16'],
    ['3fff:1000::1', 'just above 3fff::/20'],
    ['5f01::1', 'just above 5f00::/16'],
  ])('%s is public (%s)', (address) => expect(isPublicAddress(address)).toBe(true));
});

describe('publicAddressesOf', () => {
  const resolve = tableResolver({
    'public.example': [PUBLIC_V4, PUBLIC_V6],
    'merchant.example': ['127.0.0.1'],
    'mixed.example': [PUBLIC_V4, '10.0.0.7'],
    'mapped.example': ['::ffff:127.0.0.1'],
  });

  it('answers every address of a name whose addresses are all public', async () => {
    expect(await publicAddressesOf('public.example', resolve)).toEqual([{ address: PUBLIC_V4, family: 4 }, { address: PUBLIC_V6, family: 6 }]);
  });

  it.each(['merchant.example', 'mixed.example', 'mapped.example'])('refuses %s: one of its addresses is not public', async (name) => {
    await expect(publicAddressesOf(name, resolve)).rejects.toThrow(new NonPublicAddressError(name));
  });

  it('passes on the resolver error of a name that does not resolve', async () => {
    await expect(publicAddressesOf('nowhere.example', resolve)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('connectionLookup on a real socket', () => {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.end('hello');
  });
  let port = 0;
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** Connects to `merchant.example` through `lookup`: what it read, or the connection's error. */
  async function dial(lookup: LookupFunction, autoSelectFamily: boolean) {
    const socket = connect({ host: 'merchant.example', port, lookup, autoSelectFamily });
    socket.setEncoding('utf8');
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    try {
      await once(socket, 'end');
      return { text };
    } catch (error) {
      return { error: error as NodeJS.ErrnoException };
    } finally {
      socket.destroy();
    }
  }

  it.each([true, false])('refuses a name that resolves to loopback before connecting (autoSelectFamily %s)', async (autoSelectFamily) => {
    const before = connections;
    const { error } = await dial(connectionLookup(tableResolver({ 'merchant.example': ['127.0.0.1'] }), false), autoSelectFamily);
    expect(error).toMatchObject({ code: 'ERR_NON_PUBLIC_ADDRESS', message: 'merchant.example resolves to a loopback, private, link-local or reserved address' });
    expect(connections).toBe(before);
  });

  it('refuses the second answer of a name that rebinds to loopback after a public first answer', async () => {
    const resolve = rebindingResolver([PUBLIC_V4], ['127.0.0.1']);
    expect(await publicAddressesOf('merchant.example', resolve)).toEqual([{ address: PUBLIC_V4, family: 4 }]); // the check at acceptance
    const before = connections;
    const { error } = await dial(connectionLookup(resolve, false), true);
    expect(error?.code).toBe('ERR_NON_PUBLIC_ADDRESS');
    expect(resolve.lookups).toEqual(['merchant.example', 'merchant.example']);
    expect(connections).toBe(before);
  });

  it('connects through the injected resolver when private addresses are allowed', async () => {
    const before = connections;
    expect(await dial(connectionLookup(tableResolver({ 'merchant.example': ['127.0.0.1'] }), true), true)).toEqual({ text: 'hello' });
    expect(connections).toBe(before + 1);
  });
});
