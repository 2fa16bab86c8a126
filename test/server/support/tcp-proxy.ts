// A TCP proxy between a client and a server (PostgreSQL), for what a network does to a connection:
// `down()` refuses new connections, `silent()` accepts them and never answers, `freeze()` makes the
// open ones go silent without closing them (a NAT or load balancer that dropped them, a failover
// without a reset), `cut()` closes the open ones (a server restarted), `up()` lets new ones through again.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function tcpProxy(target: { host: string; port: number }) {
  let mode: 'up' | 'down' | 'silent' = 'up';
  const unanswered = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    if (mode === 'down') return void client.destroy();
    if (mode === 'silent') return void unanswered.add(client.on('error', () => {}));
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const frozen: Array<[Socket, Socket]> = [];
  return {
    /** `databaseUrl` through the proxy. */
    url(databaseUrl: string): string {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    down: () => void (mode = 'down'),
    silent: () => void (mode = 'silent'),
    up: () => void (mode = 'up'),
    cut() {
      for (const [client, upstream] of pairs) (client.destroy(), upstream.destroy());
    },
    freeze() {
      for (const pair of pairs) {
        const [client, upstream] = pair;
        for (const socket of pair) socket.removeAllListeners('close').removeAllListeners('error').on('error', () => {});
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
        frozen.push(pair);
        pairs.delete(pair);
      }
    },
    async close() {
      for (const [client, upstream] of [...pairs, ...frozen]) (client.destroy(), upstream.destroy());
      for (const client of unanswered) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
