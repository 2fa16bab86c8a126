// `Expect: 100-continue`: a client that sends it waits for `100 Continue` before its body. Node sent
// it before any application code ran, inviting bodies the sandbox then refused unread; the sandbox
// now sends it only for a body it is about to read (server/http/body-size.ts).
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../server/index.ts';
import { tokenForm } from './support/server.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ storage: 'memory' });
}, 120_000);
afterAll(() => sandbox.close());

const TOKEN = '/authentication/oauth2/-core/access_token';

/**
 * A request with `Expect: 100-continue`, its head only; the body is sent once `100 Continue` comes.
 * Answers what the sandbox wrote before the body (the first status line) and everything it wrote.
 */
function expecting(path: string, headers: Record<string, string>, body: string): Promise<{ first: string; answer: string }> {
  const { port } = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const head = Object.entries({ Host: `127.0.0.1:${port}`, Expect: '100-continue', Connection: 'close', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`));
    const bound = setTimeout(() => socket.destroy(), 10_000);
    let answer = '';
    let first: string | undefined;
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (first === undefined && answer.includes('\r\n')) {
        first = answer.slice(0, answer.indexOf('\r\n'));
        if (first === 'HTTP/1.1 100 Continue') socket.write(body);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(bound);
      resolve({ first: first ?? '', answer });
    });
  });
}

it('asks for a body it reads, and answers one it refuses unread without asking for it', async () => {
  const form = new URLSearchParams(tokenForm({ client_id: sandbox.seller.clientId, client_secret: sandbox.seller.clientSecret })).toString();
  const formHeaders = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const read = await expecting(TOKEN, { ...formHeaders, 'Content-Length': String(form.length) }, form);
  expect(read.first).toBe('HTTP/1.1 100 Continue');
  expect(read.answer).toMatch(/\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*"token_type":"Bearer"/);
  // Over the limit, compressed, a path that names nothing: the answer, and no 100 before it.
  for (const [path, headers, status] of [
    [TOKEN, { ...formHeaders, 'Content-Length': '20000000000' }, '413'],
    [TOKEN, { ...formHeaders, 'Content-Encoding': 'gzip', 'Content-Length': '30' }, '400'],
    ['/nowhere', { ...formHeaders, 'Content-Length': '5000000000' }, '404'],
    ['/sandbox/v1/sellers', { 'Content-Type': 'application/json', 'Content-Length': '5000000000' }, '401'],
  ] as const) {
    const refused = await expecting(path, headers, 'x'.repeat(30));
    expect(refused.first, path).toBe(`HTTP/1.1 ${status} ${status === '413' ? 'Payload Too Large' : status === '400' ? 'Bad Request' : status === '404' ? 'Not Found' : 'Unauthorized'}`);
    expect(refused.answer).not.toContain('100 Continue');
  }
});
