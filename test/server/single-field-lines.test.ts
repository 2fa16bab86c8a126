// Host and Authorization are taken on one line only: Node keeps the first line of each and drops the
// others, so a proxy that read the last would route or authenticate by another value than the
// sandbox. Two lines are a plain-text 400 before anything runs, on any listening address.
import { connect } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moreThanOne, oneLineOfEach, TOO_MANY_LINES } from '../../server/http/single-field-lines.ts';
import { startSandbox, type Sandbox } from '../../server/index.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { ADMIN, startTestServer, tokenForm, type TestServer } from './support/server.ts';

/** One request written as is (supertest cannot send a header twice); the whole answer as text. */
function rawRequest(url: string, head: string, body = ''): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Written, not ended: a client that half-closes its side is one that went away (the sandbox does
    // not answer it); `Connection: close` has the sandbox close the connection after its answer.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${head}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
    setTimeout(() => socket.destroy(), 10_000); // bound the test whatever happens
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}
const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

const SELLER = { trade_name: 'Twice', email: 'twice@example.com', country: 'BR', currencies: ['BRL'] };

describe('a sandbox', () => {
  let sandbox: TestServer;
  let token: string;
  beforeAll(async () => {
    sandbox = await startTestServer();
    token = (await sandbox.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
  });
  afterAll(() => sandbox.close());
  const sellers = async () => (await sandbox.store.query<{ n: number }>('SELECT count(*)::int AS n FROM sellers')).rows[0]!.n;

  it.each([
    ['Host', 'a local name, then another', 'Host: 127.0.0.1\r\nHost: rebind.attacker.example\r\n'],
    ['Host', 'another name, then a local one', 'host: rebind.attacker.example\r\nHOST: localhost\r\n'],
    ['Host', 'the same local name twice', 'Host: localhost\r\nHost: localhost\r\n'],
    ['Authorization', 'the admin token, then a bearer token', `Host: localhost\r\nAuthorization: ${ADMIN}\r\nAuthorization: Bearer x\r\n`],
    ['Authorization', 'the admin token twice', `Host: localhost\r\nauthorization: ${ADMIN}\r\nAUTHORIZATION: ${ADMIN}\r\n`],
  ])('refuses two %s lines (%s) with a plain-text 400, creating nothing', async (name, _case, lines) => {
    const before = await sellers();
    const headers = name === 'Host' ? `${lines}Authorization: ${ADMIN}\r\n` : lines;
    const answer = await rawRequest(sandbox.url, `POST /sandbox/v1/sellers HTTP/1.1\r\n${headers}Content-Type: application/json\r\n`, JSON.stringify(SELLER));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nContent-Type: text\/plain/i);
    expect(answer).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    expect(bodyOf(answer)).toBe(moreThanOne(name));
    expect(await sellers()).toBe(before);
  });

  it('refuses two Authorization lines on a merchant operation too, and answers one', async () => {
    const path = 'GET /dpy/payment-link/v1/sellers HTTP/1.1\r\nHost: localhost\r\n';
    const twice = await rawRequest(sandbox.url, `${path}Authorization: Bearer ${token}\r\nAuthorization: Bearer ${token}\r\n`);
    expect(bodyOf(twice)).toBe(moreThanOne('Authorization'));
    const once = await rawRequest(sandbox.url, `${path}Authorization: Bearer ${token}\r\n`);
    expect(once).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(bodyOf(once))).toMatchObject({ seller_id: DEMO_SELLER_ID });
  });

  it('answers one Host line, and an HTTP/1.0 request without one (as Node does)', async () => {
    for (const head of ['GET /sandbox/v1/jwks HTTP/1.1\r\nHost: localhost\r\n', 'GET /sandbox/v1/jwks HTTP/1.0\r\n']) {
      const answer = await rawRequest(sandbox.url, head);
      expect(answer).toMatch(/^HTTP\/1\.[01] 200 /);
      expect(JSON.parse(bodyOf(answer)).keys).toHaveLength(1);
    }
  });
});

describe('a sandbox started as users start it', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ storage: 'memory', env: { LOG_LEVEL: 'silent' } });
  });
  afterAll(() => sandbox?.close());

  it('refuses a request that may have lost header lines (Node keeps about the first 1,000): a second line after them is never taken', async () => {
    const filler = (n: number) => 'a: 1\r\n'.repeat(n);
    for (const lines of [
      `Host: localhost\r\nAuthorization: ${ADMIN}\r\n${filler(1998)}Authorization: Bearer someone-else\r\n`,
      `Host: localhost\r\n${filler(1998)}Host: rebind.attacker.example\r\n`,
      `Host: localhost\r\n${filler(997)}`, // 1,000 lines with the two rawRequest adds
    ]) {
      const answer = await rawRequest(sandbox.url, `GET /sandbox/v1/jwks HTTP/1.1\r\n${lines}`);
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(bodyOf(answer)).toBe(TOO_MANY_LINES);
    }
    // With the Connection and Content-Length lines rawRequest adds: 999 lines in all.
    expect(await rawRequest(sandbox.url, `GET /sandbox/v1/jwks HTTP/1.1\r\nHost: localhost\r\n${filler(996)}`)).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('the rule alone', () => {
  it('holds whatever the address: it takes no setting', async () => {
    const app = express().use(oneLineOfEach).get('/', (_req, res) => void res.send('ok'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      expect(bodyOf(await rawRequest(url, 'GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n'))).toBe(moreThanOne('Host'));
      expect(bodyOf(await rawRequest(url, 'GET / HTTP/1.1\r\nHost: a.example\r\nAuthorization: a\r\nAuthorization: b\r\n'))).toBe(moreThanOne('Authorization'));
      // Other fields may repeat (Accept is a list; Node joins or keeps them as it does).
      expect(await rawRequest(url, 'GET / HTTP/1.1\r\nHost: a.example\r\nAccept: text/plain\r\nAccept: text/html\r\n')).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\nok$/);
    } finally {
      server.close();
    }
  });
});
