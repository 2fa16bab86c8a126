// The resolver of a sandbox others reach (server/http/network-resolver.ts), against a name server of
// the test's on 127.0.0.1: answers from DNS and from the hosts file, `localhost` as loopback, and
// names whose name server never answers failing on their own timeout while other names answer at
// once (dns.lookup would queue them all on libuv's two DNS threads).
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkResolver } from '../../server/http/network-resolver.ts';

const A = 1;
const AAAA = 28;

/**
 * A name server: `merchant.example` has an A and an AAAA record, `v4only.example` an A record; names
 * starting with `silent` get no answer at all; any other name does not exist (NXDOMAIN).
 */
function nameServer(): Promise<{ socket: Socket; address: string; questions: string[] }> {
  const socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset]! > 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString());
      offset += query[offset]! + 1;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(offset + 1);
    const question = query.subarray(12, offset + 5);
    questions.push(`${name}/${type}`);
    if (name.startsWith('silent')) return;
    const records: Record<string, Record<number, Buffer>> = {
      'merchant.example': { [A]: Buffer.from([93, 184, 215, 14]), [AAAA]: Buffer.from('26062800021fcb07682080daaf6b8b2c', 'hex') },
      'v4only.example': { [A]: Buffer.from([93, 184, 215, 15]) },
    };
    const known = name in records;
    const data = records[name]?.[type];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(data ? 1 : 0, 6);
    const answer = data
      ? Buffer.concat([Buffer.from([0xc0, 0x0c]), Buffer.from([0, type, 0, 1, 0, 0, 0, 60, 0, data.length]), data])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve({ socket, address: `127.0.0.1:${socket.address().port}`, questions })));
}

let server: Awaited<ReturnType<typeof nameServer>>;
let dir: string;
let hostsFile: string;
beforeAll(async () => {
  server = await nameServer();
  dir = await mkdtemp(join(tmpdir(), 'resolver-'));
  hostsFile = join(dir, 'hosts');
  await writeFile(hostsFile, '# comment\n127.0.0.1 localhost\n93.184.216.34\tvictim.test  alias.test # the merchant\n2001:db8::1 victim.test\nnot-an-address nothing.test\n');
});
afterAll(async () => {
  server?.socket.close();
  await rm(dir, { recursive: true, force: true });
});

const resolverOf = (timeoutMs = 300) => networkResolver({ servers: [server.address], hostsFile, timeoutMs, tries: 1 });

describe('networkResolver', () => {
  it('answers every address from DNS, IPv4 and IPv6', async () => {
    const resolve = resolverOf();
    expect(await resolve('Merchant.Example.')).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    expect(await resolve('v4only.example')).toEqual([{ address: '93.184.215.15', family: 4 }]);
  });

  it('answers from the hosts file first, as getaddrinfo would, and `localhost` names as loopback', async () => {
    const resolve = resolverOf();
    const asked = server.questions.length;
    expect(await resolve('victim.test')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2001:db8::1', family: 6 },
    ]);
    expect(await resolve('ALIAS.test')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await resolve('api.localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(server.questions.length).toBe(asked); // none of them went to DNS
  });

  it('reads the hosts file again when it changes (it is parsed once per version)', async () => {
    const own = join(dir, 'hosts-changing');
    await writeFile(own, '93.184.216.40 first.test\n');
    const resolve = networkResolver({ servers: [server.address], hostsFile: own, timeoutMs: 300, tries: 1 });
    expect(await resolve('first.test')).toEqual([{ address: '93.184.216.40', family: 4 }]);
    await writeFile(own, '93.184.216.41 first.test\n93.184.216.42 second.test\n');
    expect(await resolve('first.test')).toEqual([{ address: '93.184.216.41', family: 4 }]);
    expect(await resolve('second.test')).toEqual([{ address: '93.184.216.42', family: 4 }]);
  });

  it('refuses a name that does not exist with ENOTFOUND', async () => {
    await expect(resolverOf()('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND', message: 'nothing.test did not resolve (ENOTFOUND)' });
  });

  it('fails names whose name server stays silent on their own timeout, while other names answer meanwhile', async () => {
    const resolve = resolverOf(400);
    const settled: string[] = [];
    const silent = Array.from({ length: 20 }, (_, i) =>
      resolve(`silent-${i}.example`).then(
        () => settled.push('silent answered'),
        (error: NodeJS.ErrnoException) => settled.push(`silent ${error.code}`),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const merchant = await resolve('merchant.example');
    expect(merchant).toHaveLength(2);
    expect(settled).toEqual([]); // answered while all 20 still wait for their name server
    await Promise.all(silent);
    expect(settled).toEqual(Array(20).fill('silent ETIMEOUT'));
  });
});
