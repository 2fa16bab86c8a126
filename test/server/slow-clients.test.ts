// Slow clients are timed out by the server process: headers that never finish, or a body that
// trickles past the request timeout, get a 408 and a closed connection, and the server keeps serving.
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
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(4_000);
  });

  it('answers 408 to a body that trickles past the request timeout', async () => {
    const head = 'POST /authentication/oauth2/-core/access_token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n';
    const { answer, closedAfterMs } = await trickle([head, 'grant_type=', 'client_', 'credentials', '&client_id=', 'demo'], 600);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it('keeps serving everyone else', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/sandbox/v1/jwks`);
    expect(res.status).toBe(200);
  });
});
