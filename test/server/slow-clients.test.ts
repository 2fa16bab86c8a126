// Slow clients are timed out by the server process: headers that never finish, or a body that
// trickles past the request timeout, get a 408 and a closed connection, and the server keeps serving.
// Every request Node refuses before the app (too slow, a head over 16 KiB, not HTTP) is answered with
// a line of plain text saying why (server/http/client-errors.ts), not Node's empty answer.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, type Started } from '../support/processes.ts';
import { AUTH_BUNDLE } from './support/server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
let dataDir: string;
let server: Started;
let port: number;

beforeAll(async () => {
  // The data directory inside a directory of its own, which also takes the key file the server
  // writes beside it (`<DATA_DIR>.encryption-key`), so that removing it leaves nothing behind.
  dataDir = join(await mkdtemp(join(tmpdir(), 'slow-')), 'data');
  port = await freePort();
  server = await startProcess(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], /listening on http:\/\/\S+/, {
    cwd: ROOT,
    env: {
      PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, API_SPEC: AUTH_BUNDLE, LOG_LEVEL: 'warn', DATABASE_URL: '',
      HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1500',
    },
  });
});
afterAll(async () => {
  await server?.stop();
  await rm(dirname(dataDir), { recursive: true, force: true });
});

/** Sends `parts` over a raw socket, `gapMs` apart, and resolves with what the server answered and when. */
function trickle(parts: string[], gapMs: number): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
    parts.forEach((part, i) => setTimeout(() => socket.writable && socket.write(part), i * gapMs));
    setTimeout(() => socket.destroy(), 8_000); // bound the test whatever happens
  });
}

describe('slow clients', () => {
  it('answers 408 to headers that never finish, within the headers timeout plus the check interval', async () => {
    const { answer, closedAfterMs } = await trickle(['GET /sandbox/v1/jwks HTTP/1.1\r\n', 'Host: 127.0.0.1\r\n'], 100);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toContain('\r\nContent-Type: text/plain; charset=utf-8\r\n');
    expect(answer).toContain('\r\nConnection: close\r\n');
    expect(answer.split('\r\n\r\n')[1]).toBe('The request did not arrive in time (its headers, or its whole body): send it again.\n');
    expect(closedAfterMs).toBeLessThan(4_000);
  });

  it('answers 408 to a body that trickles past the request timeout', async () => {
    const head = 'POST /authentication/oauth2/-core/access_token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n';
    const { answer, closedAfterMs } = await trickle([head, 'grant_type=', 'client_', 'credentials', '&client_id=', 'demo'], 600);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it('answers a request head over 16 KiB with a 431 that says so, and bytes that are not HTTP with a 400', async () => {
    const long = await trickle([`GET /dpy/payment-link/v1/payment-links?title=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`], 0);
    expect(long.answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    const [head, body] = long.answer.split('\r\n\r\n');
    expect(head).toContain('\r\nContent-Length: ' + Buffer.byteLength(body!));
    expect(body).toBe('The request line and headers are over 16 KiB: send a shorter URL, or fewer or shorter headers.\n');
    expect(long.closedAfterMs).toBeLessThan(4_000);
    const garbage = await trickle(['HELLO /\r\n\r\n'], 0);
    expect(garbage.answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(garbage.answer.split('\r\n\r\n')[1]).toBe('The request is not well-formed HTTP/1.1.\n');
  });

  it('keeps serving everyone else', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/sandbox/v1/jwks`);
    expect(res.status).toBe(200);
  });
});
