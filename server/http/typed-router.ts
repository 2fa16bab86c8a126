// An Express router whose handlers are typed by the contract (after Backstage's
// backend-openapi-utils): path params, query, request body and response body come from the
// operation of the path and method. Errors are thrown as ApiError (errors.ts), so `res.json` only
// takes the operation's success bodies. The runtime validator still checks everything.
import { Router, type RequestHandler } from 'express';
import type { paths } from './contract.ts';
import { expressPath, ROUTING } from './operations.ts';

export type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** Paths of the contract that have an operation for `M`. */
export type PathWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];

export type OperationOf<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

type Params<O> = O extends { parameters: infer X } ? X : never;
type OrEmpty<T> = [T] extends [never] ? Record<string, never> : T;
type ContentOf<B> = B extends { content: infer C } ? C[keyof C] : undefined;

export type PathParamsOf<O> = OrEmpty<NonNullable<Params<O> extends { path?: infer X } ? X : never>>;
export type QueryOf<O> = OrEmpty<NonNullable<Params<O> extends { query?: infer X } ? X : never>>;
export type RequestBodyOf<O> = O extends { requestBody: infer B }
  ? ContentOf<B>
  : O extends { requestBody?: infer B }
    ? ContentOf<NonNullable<B>> | undefined
    : undefined;

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206 | '2XX';
type Responses<O> = O extends { responses: infer R } ? R : never;
/** The bodies of the operation's 2xx responses (what a handler may send). */
export type SuccessBodyOf<O> = {
  [S in keyof Responses<O>]: S extends SuccessStatus ? ContentOf<Responses<O>[S]> : never;
}[keyof Responses<O>];

export type OperationHandler<O> = RequestHandler<PathParamsOf<O>, SuccessBodyOf<O>, RequestBodyOf<O>, QueryOf<O>>;

/** Middlewares first (authentication), the typed handler last. */
type Handlers<P extends keyof paths, M extends Method> = [...RequestHandler[], OperationHandler<OperationOf<P, M>>];

export { expressPath };

/**
 * A route runs only for the operation it was registered for: the one security authenticated
 * (`req.operation`) and, when validation is on, the one the validator checked (`req.openapi`). Any
 * other request that this route's pattern happens to match goes on to the next route (at the end, a 404).
 */
function onlyFor(method: string, template: string): RequestHandler {
  const upper = method.toUpperCase();
  return (req, _res, next) => {
    const secured = req.operation?.method === upper && req.operation.template === template;
    const validated = !('openapi' in req) || req.openapi === undefined || (req.openapi as { openApiRoute?: string }).openApiRoute === template;
    next(secured && validated ? undefined : 'route');
  };
}

export function typedRouter() {
  const router = Router(ROUTING);
  const route =
    <M extends Method>(method: M) =>
    <P extends PathWith<M>>(path: P, ...handlers: Handlers<P, M>) => {
      router[method](expressPath(path), onlyFor(method, path), ...(handlers as RequestHandler[]));
      return api;
    };
  const api = { router, get: route('get'), put: route('put'), post: route('post'), patch: route('patch'), delete: route('delete') };
  return api;
}
