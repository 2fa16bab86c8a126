// The validator's route lookup is compiled once per documented path, not on every request
// (server/http/route-lookup-cache.ts, the route table of express-openapi-validator pull request #1217),
// and answers what the validator's own lookup answers.
// The `pathToRegexp` of the module the validator requires is counted before the app is loaded, so
// every compilation the app causes goes through the counter. Without the cache, each request
// compiles every documented path scanned before its own: tens per request.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

it('uses the module instances the validator requires (the ones it compiles with and whose export it replaces)', async () => {
  const { validatorPathToRegexpModule } = await import('../../server/http/route-lookup-cache.ts');
  expect(validatorPathToRegexpModule()).toBe(pathToRegexpModule);
  expect(validatorRequire.resolve('path-to-regexp')).toBe(createRequire(import.meta.url).resolve('path-to-regexp'));
  const { validatorMetadataModule, applyOpenApiMetadata, ORIGINAL } = await import('../../server/http/route-lookup-cache.ts');
  const metadata = validatorRequire('./middlewares/openapi.metadata.js');
  expect(validatorMetadataModule()).toBe(metadata);
  expect(metadata.applyOpenApiMetadata).toBe(applyOpenApiMetadata); // installed by the app's validator
  expect(typeof metadata.applyOpenApiMetadata[ORIGINAL]).toBe('function');
  // The validator reads the export when it builds its middleware (through middlewares/index.js).
  expect(validatorRequire('./middlewares/index.js').applyOpenApiMetadata).toBe(applyOpenApiMetadata);
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

describe('the same answers as the validator\'s own lookup', () => {
  type Middleware = (req: object, res: object, next: (error?: unknown) => void) => void;
  const { OpenApiSpecLoader } = validatorRequire('./framework/openapi.spec.loader.js');
  const { OpenApiContext } = validatorRequire('./framework/openapi.context.js');
  let middlewares: Record<'upstream' | 'cached', (settings: Settings) => Middleware>;
  let doc: { paths: Record<string, Record<string, unknown>> };
  interface Settings {
    strict: boolean;
    sensitive: boolean;
    ignoreUndocumented?: boolean;
    useRequestUrl?: boolean;
  }

  /** Both middlewares over a document, for the given settings. */
  async function middlewaresOf(document: unknown): Promise<typeof middlewares> {
    const { applyOpenApiMetadata, ORIGINAL } = await import('../../server/http/route-lookup-cache.ts');
    const upstream = (applyOpenApiMetadata as unknown as Record<symbol, typeof applyOpenApiMetadata>)[ORIGINAL]!;
    expect(upstream).not.toBe(applyOpenApiMetadata);
    const spec = await new OpenApiSpecLoader({ apiDoc: document, validateApiSpec: false }).load();
    doc = spec.apiDoc;
    const build = (factory: typeof applyOpenApiMetadata) => (settings: Settings) => {
      const ignorePaths = (path: string) => path === '/sandbox/v1/health';
      const context = new OpenApiContext(spec, ignorePaths, settings.ignoreUndocumented ?? false, settings.useRequestUrl ?? false);
      return factory(context, { paths: structuredClone(spec.apiDoc.paths) }) as unknown as Middleware;
    };
    return { upstream: build(upstream), cached: build(applyOpenApiMetadata) };
  }

  beforeAll(async () => {
    const { readFileSync } = await import('node:fs');
    const { loadConfig } = await import('../../server/config.ts');
    middlewares = await middlewaresOf(JSON.parse(readFileSync(loadConfig({}).apiSpec, 'utf8')));
  });

  /** What a middleware did with a request: the error it threw (every field) or what it set on it. */
  function outcome(middleware: Middleware, settings: Settings, method: string, url: string) {
    const [path] = url.split('?');
    const req: Record<string, unknown> = {
      method, url, originalUrl: url, path, baseUrl: '', params: {},
      app: { enabled: (name: string) => (name === 'strict routing' ? settings.strict : name === 'case sensitive routing' ? settings.sensitive : false) },
    };
    try {
      let nextCalls = 0;
      middleware(req, {}, () => nextCalls++);
      const openapi = req.openapi as Record<string, unknown> | undefined;
      return { nextCalls, params: req.params, openapi: openapi && { ...openapi, schema: schemaName(openapi.schema), _responseSchema: schemaName(openapi._responseSchema) } };
    } catch (error) {
      return { thrown: (error as Error).constructor.name, message: (error as Error).message, ...(error as object), stack: undefined };
    }
  }
  /** A schema object named by where it sits in the document: identity, not only equal content. */
  function schemaName(schema: unknown): unknown {
    if (schema === undefined) return 'absent';
    for (const [path, item] of Object.entries(doc.paths)) for (const [method, operation] of Object.entries(item)) if (operation === schema) return `${method} ${path}`;
    return 'a copy'; // the response document's copy
  }

  it('on every documented operation, with its parameters, under every routing setting', () => {
    const requests: Array<[string, string]> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((m) => !m.startsWith('x-') && m !== 'parameters')) {
        const filled = path.replace(/\{([^}]+)\}/g, (_m, name: string) => `v-${name}`);
        requests.push([method.toUpperCase(), filled], [method.toUpperCase(), `${filled}?limit=1&x=%ZZ`], ['HEAD', filled], ['PATCH', filled]);
      }
    }
    expect(requests.length).toBeGreaterThan(100);
    for (const strict of [false, true]) {
      for (const sensitive of [false, true]) {
        const settings = { strict, sensitive };
        const [upstream, cached] = [middlewares.upstream(settings), middlewares.cached(settings)];
        for (const [method, url] of requests) expect(outcome(cached, settings, method, url), `${method} ${url}`).toEqual(outcome(upstream, settings, method, url));
      }
    }
  });

  it('on other spellings of the paths and hostile ones', () => {
    const urls = [
      '/dpy/payment-link/v1/payment-links/', '/DPY/payment-link/v1/payment-links', '/dpy/payment%2Dlink/v1/payment-links',
      '/dpy/payment-link/v1/payment-links;x=1', '//dpy/payment-link/v1/payment-links', '/dpy/payment-link/v1/payment-links/by-short-id/%E0%A4%A',
      '/dpy/payment-link/v1/payment-links/by-short-id/a%2Fb', '/dpy/payment-link/v1/payment-links/by-short-id/%F0%9F%98%80',
      '/dpy/payment-link/v1/payment-links/by-short-id/', '/dpy/payment-link/v1/nope', '/nowhere', '/', '', '/sandbox/v1/health',
      '/dpy/payment-link/v1/payment-links/by-short-id/x?y=%E0%A4%A', '/rpy/be-subscription/v1/subscriptions/%00',
    ];
    for (const settings of [
      { strict: false, sensitive: false },
      { strict: true, sensitive: true },
      { strict: false, sensitive: false, ignoreUndocumented: true },
      { strict: false, sensitive: false, useRequestUrl: true },
    ]) {
      const [upstream, cached] = [middlewares.upstream(settings), middlewares.cached(settings)];
      for (const method of ['GET', 'POST', 'DELETE', 'OPTIONS']) {
        for (const url of urls) expect(outcome(cached, settings, method, url), `${method} ${url}`).toEqual(outcome(upstream, settings, method, url));
      }
    }
    // Generated spellings: documented paths, their parameters filled with hostile pieces, then mutated
    // at random (seeded): a segment replaced, removed, doubled, upper-cased or percent-encoded, a
    // trailing slash or a query added.
    let seed = 20261123;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const documented = Object.keys(doc.paths);
    const pieces = [...new Set(documented.flatMap((path) => path.split('/')))].concat(['', '%2F', '%2e%2E', '..', '.', ';a=b', '%', '%ZZ', '%C3%A9', 'É', '~', ':id', '*', '(', ')', '+', ' ', 'v-1']);
    const generated: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const segments = documented[random(documented.length)]!.replace(/\{[^}]+\}/g, () => pieces[random(pieces.length)]!).split('/');
      for (let n = random(3); n > 0; n--) {
        const at = 1 + random(segments.length - 1);
        const mutation = random(5);
        if (mutation === 0) segments[at] = pieces[random(pieces.length)]!;
        else if (mutation === 1) segments.splice(at, 1);
        else if (mutation === 2) segments.splice(at, 0, segments[at] ?? '');
        else if (mutation === 3) segments[at] = (segments[at] ?? '').toUpperCase();
        else segments[at] = (segments[at] ?? '').replace(/[a-z-]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
      }
      let path = segments.join('/');
      if (random(5) === 0) path += '/';
      if (random(6) === 0) path += '?q=' + pieces[random(pieces.length)];
      generated.push(path);
    }
    const kinds = new Map<string, number>();
    for (const settings of [{ strict: false, sensitive: false }, { strict: true, sensitive: true }]) {
      const [upstream, cached] = [middlewares.upstream(settings), middlewares.cached(settings)];
      for (const url of generated) {
        const method = ['GET', 'POST', 'PATCH'][random(3)]!;
        const answer = outcome(cached, settings, method, url) as { thrown?: string; openapi?: unknown };
        expect(answer, `${method} ${url}`).toEqual(outcome(upstream, settings, method, url));
        const kind = answer.thrown ?? (answer.openapi ? 'matched' : 'passed by');
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
    }
    // Each answer is reached by tens of generated spellings at least.
    for (const kind of ['matched', 'NotFound', 'MethodNotAllowed', 'BadRequest']) expect(kinds.get(kind) ?? 0, kind).toBeGreaterThan(20);
    // The cases above are not all alike: they reach each of the lookup's answers.
    const settings = { strict: false, sensitive: false };
    const answers = urls.map((url) => outcome(middlewares.cached(settings), settings, 'GET', url) as { thrown?: string; nextCalls?: number });
    expect(new Set(answers.map((a) => a.thrown ?? 'next'))).toEqual(new Set(['BadRequest', 'NotFound', 'next']));
    expect(outcome(middlewares.cached(settings), settings, 'DELETE', '/dpy/payment-link/v1/payment-links')).toMatchObject({ thrown: 'MethodNotAllowed', status: 405, headers: { Allow: expect.stringContaining('GET') } });
  });
  it('fails only the requests that reach a path path-to-regexp refuses, as the validator does, each time', async () => {
    const ok = { responses: { '200': { description: 'ok' } } };
    const document = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/aaa': { get: ok }, '/x/{a}{b}': { get: ok }, '/zzz': { get: ok } } };
    const { upstream, cached } = await middlewaresOf(document);
    const settings = { strict: false, sensitive: false };
    const [original, replacement] = [upstream(settings), cached(settings)];
    const seen = new Map<string, unknown>();
    for (let round = 0; round < 2; round++) {
      for (const url of ['/aaa', '/zzz', '/x/1', '/nope', '/aaa']) {
        const answer = outcome(replacement, settings, 'GET', url);
        expect(answer, url).toEqual(outcome(original, settings, 'GET', url));
        seen.set(url, answer);
      }
    }
    expect(seen.get('/aaa')).toMatchObject({ nextCalls: 1, openapi: { openApiRoute: '/aaa' } }); // before the refused path: answered
    expect(seen.get('/zzz')).toMatchObject({ thrown: 'PathError', message: expect.stringContaining('/x/:a:b') });
  });
});
