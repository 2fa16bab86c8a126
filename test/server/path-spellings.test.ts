// One routing truth: no other spelling of a secured operation's path (letter case, trailing slash,
// `//`, percent-encoding, `;` parameters, dot segments, backslashes) reaches a handler without that
// operation's security. Every secured operation of the joined bundle is probed without credentials,
// on the raw socket (an HTTP client would normalise dot segments before sending), and nothing may
// change in the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deref, examplesOf, loadPlatform, operationsOf, type Operation } from '../support/contract.ts';
import { spellingsOf } from '../support/path-spellings.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

const ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6'; // the demo seller; any UUID does for other ids

/** The path with each `{param}` replaced by a plausible value. */
const concrete = (template: string) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) => (/installment/.test(name) ? '1' : /status/.test(name) ? 'inactive' : /event_name/.test(name) ? 'payment' : ID));

const PLATFORM = loadPlatform();

/** The operation's first JSON request example, so that a probe that got through would change state. */
function exampleBody(op: Operation): { type: string; text: string } {
  const content = deref(PLATFORM, op.operation.requestBody)?.content ?? {};
  const form = content['application/x-www-form-urlencoded'];
  if (form) return { type: 'application/x-www-form-urlencoded', text: new URLSearchParams(examplesOf(PLATFORM, form)[0]?.[1] as Record<string, string>).toString() };
  return { type: 'application/json', text: JSON.stringify(examplesOf(PLATFORM, content['application/json'])[0]?.[1] ?? {}) };
}

async function raw(url: string, method: string, path: string, body = { type: 'application/json', text: '{}' }): Promise<{ status: number; body: string }> {
  const answer = await rawRequest(url, { method, path, headers: { 'content-type': body.type }, body: body.text });
  return { status: answer.status, body: answer.text };
}

const SECURED = operationsOf(PLATFORM).filter((op) => (op.operation.security ?? []).some((r: object) => Object.keys(r).length > 0));

describe('no spelling of a secured path gets past its security', () => {
  let server: TestServer;
  let before: unknown[];
  const counts = async () =>
    Promise.all(['sellers', 'plans', 'subscriptions', 'payment_links', 'payment_intents', 'test_clocks'].map(async (table) => (await server.store.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]));

  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: new URL('../../generated/platform.openapi.json', import.meta.url).pathname } });
    before = await counts();
  });
  afterAll(() => server?.close());

  it('covers every secured operation of the bundle', () => {
    expect(SECURED.length).toBeGreaterThan(20);
    expect(SECURED.map((op) => op.operationId)).toContain('createSandboxSeller');
  });

  it.each(SECURED.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))('%s', async (_name, op) => {
    const method = op.method.toUpperCase();
    const canonical = await raw(server.url, method, concrete(op.path), exampleBody(op));
    expect(canonical.status, `${method} ${concrete(op.path)}`).toBe(401);
    const answers = await Promise.all(spellingsOf(concrete(op.path)).map(async (path) => ({ path, ...(await raw(server.url, method, path, exampleBody(op))) })));
    if (method === 'GET') {
      for (const path of [concrete(op.path), ...spellingsOf(concrete(op.path))]) answers.push({ path: `HEAD ${path}`, ...(await raw(server.url, 'HEAD', path)) });
    }
    const through = answers.filter((a) => a.status !== 401 && a.status !== 404);
    expect(through, JSON.stringify(through, null, 1)).toEqual([]);
  });

  it('left the store as it was', async () => {
    expect(await counts()).toEqual(before);
  });
});

describe('spellingsOf', () => {
  it('derives case, slash, encoding, parameter and dot-segment spellings', () => {
    const spellings = spellingsOf('/sandbox/v1/sellers');
    expect(spellings).toEqual(
      expect.arrayContaining(['/SANDBOX/V1/SELLERS', '/Sandbox/v1/sellers', '/sandbox/v1/sellers/', '//sandbox/v1/sellers', '/%73andbox/v1/sellers', '/sandbox;x=1/v1/sellers', '/sandbox/./v1/sellers', '/sandbox/x/../v1/sellers']),
    );
    expect(spellings).not.toContain('/sandbox/v1/sellers');
  });
});
