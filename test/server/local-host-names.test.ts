// DNS rebinding: a sandbox listening on this machine only answers requests addressed to it by a
// local name (or PUBLIC_BASE_URL's host); a page that pointed its own name at 127.0.0.1 is refused
// before anything runs, the admin API included. A sandbox on another address takes any Host.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { localHostNamesOnly, MORE_THAN_ONE_HOST, WRONG_HOST } from '../../server/http/local-host-names.ts';
import { ADMIN, startTestServer, type TestServer } from './support/server.ts';

/** One request written as is (supertest cannot send a header twice); the whole answer as text. */
function rawRequest(url: string, head: string, body = ''): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(`${head}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

const SELLER = { trade_name: 'Rebound', email: 'rebound@example.com', country: 'BR', currencies: ['BRL'] };

describe('a sandbox on 127.0.0.1', () => {
  let sandbox: TestServer;
  beforeAll(async () => {
    sandbox = await startTestServer({ config: { publicBaseUrl: 'http://sandbox.test:9000' } });
  });
  afterAll(() => sandbox.close());
  const sellers = async () => (await sandbox.store.query<{ n: number }>('SELECT count(*)::int AS n FROM sellers')).rows[0]!.n;

  it.each(['rebind.attacker.example:9000', 'rebind.attacker.example', '127.0.0.1.attacker.example', 'localhost.attacker.example', '10.0.0.1', 'sandbox.test.attacker.example', '[::1]attacker.example', '[::1]:80.attacker.example', '[::1'])(
    'refuses Host: %s with 403, before the admin API runs',
    async (host) => {
      const before = await sellers();
      const res = await sandbox.http.post('/sandbox/v1/sellers').set('Host', host).set('Authorization', ADMIN).send(SELLER);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe(WRONG_HOST);
      expect(await sellers()).toBe(before);
    },
  );

  it.each(['127.0.0.1', '127.0.0.1:1234', '127.9.9.9', 'localhost', 'LOCALHOST:80', 'localhost.', 'app.localhost', '[::1]:9000', 'sandbox.test:9000', 'sandbox.test'])(
    'answers Host: %s',
    async (host) => {
      const res = await sandbox.http.get('/sandbox/v1/jwks').set('Host', host);
      expect(res.status).toBe(200);
      expect(res.body.keys).toHaveLength(1);
    },
  );

  it.each([
    ['a local name, then another', 'Host: 127.0.0.1\r\nHost: rebind.attacker.example\r\n'],
    ['another name, then a local one', 'host: rebind.attacker.example\r\nHOST: localhost\r\n'],
    ['the same local name twice', 'Host: localhost\r\nHost: localhost\r\n'],
  ])('refuses two Host lines (%s) with 400, before the admin API runs (RFC 9112, section 3.2)', async (_case, hosts) => {
    const before = await sellers();
    const answer = await rawRequest(sandbox.url, `POST /sandbox/v1/sellers HTTP/1.1\r\n${hosts}Authorization: ${ADMIN}\r\nContent-Type: application/json\r\n`, JSON.stringify(SELLER));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nContent-Type: text\/plain/i);
    expect(answer.endsWith(`\r\n\r\n${MORE_THAN_ONE_HOST}`)).toBe(true);
    expect(await sellers()).toBe(before);
  });

  it('answers one Host line, and an HTTP/1.0 request without one (as Node does)', async () => {
    for (const head of ['GET /sandbox/v1/jwks HTTP/1.1\r\nHost: localhost\r\n', 'GET /sandbox/v1/jwks HTTP/1.0\r\n']) {
      const answer = await rawRequest(sandbox.url, head);
      expect(answer).toMatch(/^HTTP\/1\.[01] 200 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).keys).toHaveLength(1);
    }
  });

  it('refuses the hosted pages and the token endpoint under another name too', async () => {
    const page = await sandbox.http.get('/pay/anything').set('Host', 'rebind.attacker.example');
    const token = await sandbox.http.post('/authentication/oauth2/-core/access_token').set('Host', 'rebind.attacker.example').type('form').send({ grant_type: 'client_credentials' });
    for (const res of [page, token]) {
      expect(res.status).toBe(403);
      expect(res.text).toBe(WRONG_HOST);
    }
  });
});

describe('a sandbox on an address others can reach', () => {
  it('takes any Host: it is not protected by where it listens anyway', async () => {
    const app = express().use(localHostNamesOnly({ host: '0.0.0.0', publicBaseUrl: 'http://localhost:8080' })).get('/', (_req, res) => void res.send('ok'));
    const res = await request(app).get('/').set('Host', 'rebind.attacker.example');
    expect(res.status).toBe(200);
    expect(res.text).toBe('ok');
  });

  it('refuses two Host lines there too (RFC 9112, section 3.2)', async () => {
    const app = express().use(localHostNamesOnly({ host: '0.0.0.0', publicBaseUrl: 'http://localhost:8080' })).get('/', (_req, res) => void res.send('ok'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      expect(await rawRequest(url, 'GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n')).toMatch(new RegExp(`^HTTP/1\\.1 400 [^]*${MORE_THAN_ONE_HOST.replace(/[.()]/g, '\\$&')}$`));
      expect(await rawRequest(url, 'GET / HTTP/1.1\r\nHost: a.example\r\n')).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\nok$/);
    } finally {
      server.close();
    }
  });

  it('is the same rule on ::1 and localhost as on 127.0.0.1', async () => {
    for (const host of ['::1', 'localhost']) {
      const app = express().use(localHostNamesOnly({ host, publicBaseUrl: 'http://localhost:8080' })).get('/', (_req, res) => void res.send('ok'));
      expect((await request(app).get('/').set('Host', 'rebind.attacker.example')).status).toBe(403);
      expect((await request(app).get('/').set('Host', '[::1]:8080')).status).toBe(200);
    }
  });
});
