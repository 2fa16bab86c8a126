// A request target in absolute form (RFC 9112 §3.2.2): its authority is the host the Host rule
// checks, and its path is routed, authenticated and validated exactly as the same path in origin
// form (server/http/origin-form.ts). Sent on the raw socket: an HTTP client sends origin form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_A_TARGET } from '../../server/http/origin-form.ts';
import { WRONG_HOST } from '../../server/http/local-host-names.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import { rawRequest } from '../support/raw-http.ts';
import { ADMIN, startTestServer, type TestServer } from './support/server.ts';
import { createLink } from './support/payment-link.ts';

describe('a request target in absolute form', () => {
  let sandbox: TestServer;
  beforeAll(async () => {
    sandbox = await startTestServer({});
  });
  afterAll(() => sandbox.close());
  const send = (path: string, headers: Record<string, string> = {}) => rawRequest(sandbox.url, { method: 'GET', path, headers });

  it('is refused with 403 when its authority is not a local name, whatever Host says (DNS rebinding)', async () => {
    for (const path of ['http://rebind.attacker.example/sandbox/v1/jwks', 'HTTP://rebind.attacker.example:80/checkout/00000000-0000-4000-8000-000000000000']) {
      const res = await send(path, { host: 'localhost' });
      expect(res.status, path).toBe(403);
      expect(res.text).toBe(WRONG_HOST);
    }
  });

  it('answers as its path in origin form: the same status and body, authenticated the same way', async () => {
    const origin = await send('/sandbox/v1/jwks');
    const absolute = await send('http://localhost/sandbox/v1/jwks', { host: 'rebind.attacker.example' }); // the target's authority wins over Host
    expect(absolute).toEqual(origin);
    expect(JSON.parse(absolute.text).keys).toHaveLength(1);
    const list = `/sandbox/v1/notifications?seller_id=${DEMO_SELLER_ID}`;
    for (const headers of [{}, { authorization: ADMIN }] as Array<Record<string, string>>) {
      const [o, a] = [await send(list, headers), await send(`http://127.0.0.1${list}`, headers)];
      expect(a.status).toBe(o.status);
      expect(JSON.parse(a.text)).toEqual(JSON.parse(o.text));
    }
    expect((await send(`http://127.0.0.1${list}`)).status).toBe(401);
    expect((await send(`http://127.0.0.1${list}`, { authorization: ADMIN })).status).toBe(200);
  });

  it('reaches the hosted pages as their path does: the same page, and no other (mounted paths are cut from the rewritten target)', async () => {
    const link = await createLink(sandbox, DEMO_SELLER_ID);
    const page = `/pay/${link.short_id}`;
    const [origin, absolute] = [await send(page), await send(`http://localhost${page}`)];
    expect(origin.status).toBe(200);
    expect(absolute.status).toBe(200);
    expect(absolute.contentType).toBe('text/html');
    expect(absolute.text).toContain(link.short_id);
    // As long as "http://localhost": the router once cut that many characters from the mounted path.
    const padded = `/pay/${'a'.repeat('http://localhost'.length - 1)}/${link.short_id}`;
    expect((await send(padded)).status).toBe(404);
    expect((await send(`http://localhost${padded}`)).status).toBe(404);
    const checkout = '/checkout/00000000-0000-4000-8000-000000000000';
    const [o, a] = [await send(checkout), await send(`http://localhost${checkout}`)];
    expect([a.status, a.contentType]).toEqual([o.status, o.contentType]);
  });

  it('keeps its path as sent: a dot segment is not resolved into a route', async () => {
    expect((await send('/sandbox/x/../v1/jwks')).status).toBe(404);
    expect((await send('http://localhost/sandbox/x/../v1/jwks')).status).toBe(404);
    expect((await send('http://localhost')).status).toBe(404); // the path "/"
  });

  it('is refused with 400 when it is neither a path nor an absolute http(s) URL', async () => {
    for (const path of ['*', 'ftp://localhost/sandbox/v1/jwks', 'http://user:pass@localhost/sandbox/v1/jwks', 'http:///sandbox/v1/jwks', 'http://[::1]evil.example/sandbox/v1/jwks']) {
      const res = await send(path);
      expect(res.status, path).toBe(400);
      expect(res.contentType, path).toBe('text/plain');
      expect(res.text).toBe(NOT_A_TARGET);
    }
    expect((await send('localhost:80')).status).toBe(400); // authority form: refused by Node's parser before the app
    // Logged with the target as it was sent (not the "/" it is routed as).
    const urls = sandbox.logs.lines.filter((line) => line.req?.url !== undefined).map((line) => line.req.url);
    expect(urls).toEqual(expect.arrayContaining(['*', 'ftp://localhost/sandbox/v1/jwks', 'http://[::1]evil.example/sandbox/v1/jwks', '/sandbox/v1/jwks']));
  });
});
