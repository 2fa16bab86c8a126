// express-openapi-validator 5.6.2 finds a request's operation (middlewares/openapi.metadata.js,
// `applyOpenApiMetadata` and its `lookupRoute`) by scanning every documented path on every request,
// and for each one: `Object.entries` of the route map, its route pair, the path key's substring,
// both routing settings read from the app, an options object, then `pathToRegexp` compiling the
// path again. With ~60 paths that was most of the validator's routing cost. Upstream pull request
// #1217 caches the compiled matchers. Until a release has it, this file replaces the metadata
// middleware from outside with the same middleware over a route table: the documented paths in the
// route map's own order (Express route, OpenAPI route, path key), read on the first request, and
// for each pair of the app's routing settings ("strict routing", "case sensitive routing", read on
// every request as upstream does) the matchers and parameter names, each compiled when a scan first
// reaches its path, as upstream compiles it (a path path-to-regexp refuses fails only the requests
// that reach it, as upstream's does). Each request then runs the matchers in order until one
// matches. Everything else is upstream's code as it is: what it answers (`req.openapi`,
// `req.params`, the 405 with its Allow header, the 404, the 400 of a malformed escape), the same
// path, the same order, the same error classes (the validator's own, required from its `dist/`).
// test/server/route-lookup-cache.test.ts compares the two middlewares on every documented
// operation, on hostile and generated spellings, and on a path path-to-regexp refuses.
//
// Why a wrapper and not patch-package: this package is published, and a patch applied by the
// workspace's postinstall would never reach its consumers (their `npm install` does not run our
// postinstall), nor does it need a new dependency or a network-dependent install step in CI. The
// wrapper ships with the sandbox, needs nothing at install time, and is a no-op to delete once a
// validator release looks routes up without compiling them per request. The validator's version is
// pinned exactly (server/package.json), so that the copied middleware cannot drift from it unseen.
import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };
interface PathToRegexpModule {
  pathToRegexp: PathToRegexp;
}

/** The `path-to-regexp` module instance that express-openapi-validator itself requires. */
export function validatorPathToRegexpModule(): PathToRegexpModule {
  return validatorRequire()('path-to-regexp') as PathToRegexpModule;
}

/**
 * `require` as express-openapi-validator's own entry module has it: what it resolves (its
 * dependencies, `./` paths inside its `dist/`) is the very module instance the validator uses,
 * whatever copy npm hoists. The wrappers of this folder patch those instances.
 */
export function validatorRequire(): NodeJS.Require {
  return createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
}


type Methods = Record<string, unknown> & { basePath: string };
type PathItems = Record<string, Record<string, unknown>>;
/** The validator's OpenApiContext (framework/openapi.context.js): what its metadata middleware reads. */
interface OpenApiContext {
  expressRouteMap: Record<string, Methods>;
  openApiRouteMap: Record<string, Record<string, unknown>>;
  apiDoc: { paths: PathItems };
  useRequestUrl: boolean;
  ignoreUndocumented: boolean;
  serial: number;
  shouldIgnoreRoute(path: string): boolean;
  isManagedRoute(path: string): boolean;
  routePair(route: string): { expressRoute: string; openApiRoute: string } | null;
}
interface MetadataRequest {
  method: string;
  url: string;
  originalUrl: string;
  path: string;
  baseUrl: string;
  app: { enabled(setting: string): boolean };
  params: unknown;
  openapi?: Record<string, unknown>;
}
type Next = (error?: unknown) => void;
type Middleware = (req: MetadataRequest, res: unknown, next: Next) => void;
type ApplyOpenApiMetadata = ((context: OpenApiContext, responseApiDoc?: { paths: PathItems } | null) => Middleware) & { [ORIGINAL]?: ApplyOpenApiMetadata };
interface MetadataModule {
  applyOpenApiMetadata: ApplyOpenApiMetadata;
}
type HttpErrorClass = new (error: { path: string; message: string; headers?: Record<string, string> }) => Error;

/** On the replacement: the validator's own middleware factory (it marks the replacement installed). */
export const ORIGINAL = Symbol.for('payment-platform.sandbox.validatorOriginalMetadata');

export const validatorMetadataModule = () => validatorRequire()('./middlewares/openapi.metadata.js') as MetadataModule;

/** One documented path as the lookup needs it. */
interface Route {
  expressRoute: string;
  openApiRoute: string;
  pathKey: string;
}
/** A route's matcher under one pair of routing settings. */
interface Matcher {
  regexp: RegExp;
  paramKeys: string[];
}

/** Installs the compiled-once route lookup once per module instance (later calls change nothing). */
export function cacheValidatorRouteLookup(module: MetadataModule = validatorMetadataModule()): void {
  const original = module.applyOpenApiMetadata;
  if (original[ORIGINAL]) return;
  module.applyOpenApiMetadata = Object.assign(applyOpenApiMetadata, { [ORIGINAL]: original });
}

/** express-openapi-validator 5.6.2's `applyOpenApiMetadata`, its routes compiled once (see the top). */
export function applyOpenApiMetadata(openApiContext: OpenApiContext, responseApiDoc?: { paths: PathItems } | null): Middleware {
  const require = validatorRequire();
  const { MethodNotAllowed, NotFound, BadRequest } = require('./framework/types.js') as Record<'MethodNotAllowed' | 'NotFound' | 'BadRequest', HttpErrorClass>;
  const { httpMethods } = require('./middlewares/parsers/schema.preprocessor.js') as { httpMethods: Set<string> };
  const { zipObject } = require('./middlewares/util.js') as { zipObject(keys: string[], values: string[]): Record<string, string> };
  /** The documented paths in the route map's order, read on the first request (the map is complete by then). */
  let routes: Route[] | undefined;
  /**
   * For each pair of routing settings, the matchers compiled so far, by route index. Each is compiled
   * when a scan first reaches its route, as upstream compiles it: a path path-to-regexp refuses
   * fails the requests that reach it, as upstream's does, and no other (nothing is kept for it).
   */
  const matchers = new Map<number, Array<Matcher | undefined>>();
  const matchersFor = (strict: boolean, sensitive: boolean) => {
    const settings = (strict ? 2 : 0) | (sensitive ? 1 : 0);
    let compiled = matchers.get(settings);
    if (!compiled) matchers.set(settings, (compiled = []));
    return compiled;
  };
  const compile = (route: Route, strict: boolean, sensitive: boolean): Matcher => {
    const { pathToRegexp } = validatorPathToRegexpModule(); // read now, as upstream reads it at each call
    const { regexp, keys } = pathToRegexp(route.expressRoute, { sensitive, strict });
    return { regexp, paramKeys: (keys as Array<{ name: string }>).map((k) => k.name) };
  };

  const lookupRoute = (req: MetadataRequest, useRequestUrl: boolean) => {
    const path = useRequestUrl ? req.url.split('?')[0]! : req.originalUrl.split('?')[0]!;
    const method = req.method.toLowerCase();
    routes ??= Object.entries(openApiContext.expressRouteMap).map(([expressRoute, methods]) => {
      const openApiRoute = openApiContext.routePair(expressRoute)!.openApiRoute;
      return { expressRoute, openApiRoute, pathKey: openApiRoute.substring(methods.basePath.length) };
    });
    if (routes.length === 0) return null; // upstream reads no setting then
    const strict = !!req.app.enabled('strict routing');
    const sensitive = !!req.app.enabled('case sensitive routing');
    const compiled = matchersFor(strict, sensitive);
    for (let index = 0; index < routes.length; index++) {
      const { regexp, paramKeys } = (compiled[index] ??= compile(routes[index]!, strict, sensitive));
      const matchedRoute = regexp.exec(path);
      if (matchedRoute) {
        const { expressRoute, openApiRoute, pathKey } = routes[index]!;
        const schema = openApiContext.apiDoc.paths[pathKey]![method];
        const _responseSchema = responseApiDoc?.paths[pathKey]![method];
        try {
          const pathParams = zipObject(paramKeys, matchedRoute.slice(1).map(decodeURIComponent));
          return { schema, expressRoute, openApiRoute, pathParams, serial: -1, _responseSchema };
        } catch {
          throw new BadRequest({ path: req.path, message: `malformed uri'` }); // upstream's message, quote and all
        }
      }
    }
    return null;
  };

  return (req, _res, next) => {
    // note base path is empty when path is fully qualified i.e. req.path.startsWith('')
    const path = req.path.startsWith(req.baseUrl) ? req.path : `${req.baseUrl}/${req.path}`;
    if (openApiContext.shouldIgnoreRoute(path)) return next();
    const matched = lookupRoute(req, openApiContext.useRequestUrl);
    if (matched) {
      const { expressRoute, openApiRoute, pathParams, schema } = matched;
      if (!schema) {
        // Prevents validation for routes which match on path but mismatch on method
        if (openApiContext.ignoreUndocumented) return next();
        throw new MethodNotAllowed({
          path: req.path,
          message: `${req.method} method not allowed`,
          headers: {
            Allow: Object.keys(openApiContext.openApiRouteMap[openApiRoute]!)
              .filter((key) => httpMethods.has(key.toLowerCase()))
              .join(', '),
          },
        });
      }
      req.openapi = { expressRoute, openApiRoute, pathParams, schema, serial: openApiContext.serial };
      req.params = pathParams;
      if (responseApiDoc) req.openapi._responseSchema = matched._responseSchema; // add the response schema if validating responses
    } else if (openApiContext.isManagedRoute(path) && !openApiContext.ignoreUndocumented) {
      throw new NotFound({ path: req.path, message: 'not found' });
    }
    next();
  };
}
