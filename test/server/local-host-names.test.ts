// DNS rebinding: a sandbox listening on this machine only answers requests addressed to it by a
// local name (or PUBLIC_BASE_URL's host); a page that pointed its own name at 127.0.0.1 is refused
// before anything runs, the admin API included. A sandbox on another address takes any Host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { localHostNamesOnly, WRONG_HOST } from '../../server/http/local-host-names.ts';
import { ADMIN, startTestServer, type TestServer } from './support/server.ts';

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

  it('is the same rule on ::1 and localhost as on 127.0.0.1', async () => {
    for (const host of ['::1', 'localhost']) {
      const app = express().use(localHostNamesOnly({ host, publicBaseUrl: 'http://localhost:8080' })).get('/', (_req, res) => void res.send('ok'));
      expect((await request(app).get('/').set('Host', 'rebind.attacker.example')).status).toBe(403);
      expect((await request(app).get('/').set('Host', '[::1]:8080')).status).toBe(200);
    }
  });
});
