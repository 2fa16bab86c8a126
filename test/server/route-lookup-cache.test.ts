// The validator's route lookup is compiled once per documented path, not on every request
// (server/http/route-lookup-cache.ts, the cache of express-openapi-validator pull request #1217).
// The `pathToRegexp` of the module the validator requires is counted before the app is loaded, so
// every compilation the app causes goes through the counter. Without the cache, each request
// compiles every documented path scanned before its own: tens per request.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';

type Compile = (path: unknown, options?: unknown) => { regexp: RegExp; keys: Array<{ name: string }> };
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexpModule = validatorRequire('path-to-regexp') as { pathToRegexp: Compile };
const original = pathToRegexpModule.pathToRegexp;
let compilations = 0;
pathToRegexpModule.pathToRegexp = (path, options) => {
  compilations++;
  return original(path, options);
};

const REQUESTS = 40;
const LINK_NOT_FOUND = { error_code: 'payment_link_not_found', message: 'Payment Link not found', status_code: 404 };
let server: Awaited<ReturnType<typeof import('./support/server.ts').startTestServer>>;
let token: string;
let documentedPaths: number;

beforeAll(async () => {
  // Imported only now, so that the app and the validator see the counting pathToRegexp.
  const { startTestServer, tokenForm } = await import('./support/server.ts');
  const { loadConfig } = await import('../../server/config.ts');
  const { readFileSync } = await import('node:fs');
  const apiSpec = loadConfig({}).apiSpec; // the whole platform bundle
  documentedPaths = Object.keys(JSON.parse(readFileSync(apiSpec, 'utf8')).paths).length;
  server = await startTestServer({ config: { apiSpec } });
  token = (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
});
afterAll(async () => {
  await server?.close();
  pathToRegexpModule.pathToRegexp = original;
});

it('uses the module instance the validator requires (the one the cache replaces the export of)', async () => {
  const { validatorPathToRegexpModule } = await import('../../server/http/route-lookup-cache.ts');
  expect(validatorPathToRegexpModule()).toBe(pathToRegexpModule);
  expect(validatorRequire.resolve('path-to-regexp')).toBe(createRequire(import.meta.url).resolve('path-to-regexp'));
});

it(`compiles each documented path at most once across ${REQUESTS} requests`, async () => {
  expect(documentedPaths).toBeGreaterThan(20);
  const before = compilations;
  for (let i = 0; i < REQUESTS / 2; i++) {
    const seller = await server.http.get('/dpy/payment-link/v1/sellers').set('authorization', `Bearer ${token}`);
    expect(seller.status).toBe(200);
    // A templated path: still matched, its parameter still read (a 404 of the link, not of the path).
    const link = await server.http.get('/dpy/payment-link/v1/payment-links/by-short-id/NOPE1234').set('authorization', `Bearer ${token}`);
    expect({ status: link.status, body: link.body }).toEqual({ status: 404, body: LINK_NOT_FOUND });
  }
  const during = compilations - before;
  // Lazily cached: the first requests compile the paths they scan, the others none.
  expect(during).toBeLessThanOrEqual(documentedPaths);
  expect(during).toBeLessThan(REQUESTS);
});

it('keeps the results of an uncached compilation: same regexp, same keys', async () => {
  const { cacheValidatorRouteLookup } = await import('../../server/http/route-lookup-cache.ts');
  cacheValidatorRouteLookup(pathToRegexpModule); // already installed: nothing changes
  const cached = pathToRegexpModule.pathToRegexp('/v1/links/:id', { sensitive: true, strict: true });
  const fresh = original('/v1/links/:id', { sensitive: true, strict: true });
  expect(cached.regexp.source).toBe(fresh.regexp.source);
  expect(cached.regexp.flags).toBe(fresh.regexp.flags);
  expect(cached.keys).toEqual(fresh.keys);
  expect(pathToRegexpModule.pathToRegexp('/v1/links/:id', { sensitive: true, strict: true })).toBe(cached);
  // Other options are another entry.
  expect(pathToRegexpModule.pathToRegexp('/v1/links/:id', { sensitive: false, strict: true }).regexp.flags).toBe('i');
});

it('keys a compilation by the path and every option, so that no two differ and share an entry', async () => {
  const { keyOf } = await import('../../server/http/route-lookup-cache.ts');
  const keys = [
    keyOf('/a', undefined),
    keyOf('/a', { strict: true }),
    keyOf('/a', { strict: 'true' }),
    keyOf('/a', { strict: true, sensitive: false }),
    keyOf('/a', { strict: true, sensitive: undefined }),
    keyOf('/a', { strict: 'true|5:other=boolean:4:true' }),
    keyOf('/a', { strict: 'true', other: true }),
    keyOf('/a|5:strict', {}),
  ];
  expect(new Set(keys).size).toBe(keys.length);
  expect(keyOf('/a', {})).toBe(keyOf('/a', undefined)); // no option is the defaults either way
  expect(keyOf('/a', { strict: true, sensitive: false })).toBe(keyOf('/a', { strict: true, sensitive: false }));
  // Not plain values: compiled as before, uncached.
  expect(keyOf('/a', { decode: () => '' })).toBeUndefined();
  expect(keyOf(['/a', '/b'], {})).toBeUndefined();
});
