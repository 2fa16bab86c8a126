// HEAD, which every HTTP server must answer as it answers GET, without the body (RFC 9110 §9.1 and
// §9.3.2). The contract documents GET operations only: the security layer (operations.ts) and the
// error renderer take a HEAD for its GET (servedAs), a 405 names HEAD beside GET (allowingHead), and
// the validator sees the request as the GET it stands for, the method HEAD again after it. Express
// routes a HEAD to its GET itself, then sends the GET's status and headers, Content-Length
// included, and no body (Node drops it for a HEAD).
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';

/** The method whose operation answers a request: GET for a HEAD. */
export const servedAs = (method: string) => (method === 'HEAD' ? 'GET' : method);

/** A 405's `Allow` with HEAD beside GET. */
export function allowingHead(headers: Record<string, string>): Record<string, string> {
  const allow = headers.Allow?.split(/,\s*/);
  if (allow?.includes('GET') && !allow.includes('HEAD')) headers.Allow = [...allow, 'HEAD'].join(', ');
  return headers;
}

const AS_GET = Symbol('a HEAD validated as its GET');
const marked = (req: Request) => (req as unknown as Record<symbol, boolean>)[AS_GET] === true;
const restore = (req: Request) => {
  if (marked(req)) req.method = 'HEAD';
};

/** Before the validator: a HEAD is validated as its GET. */
export const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') {
    req.method = 'GET';
    (req as unknown as Record<symbol, boolean>)[AS_GET] = true;
  }
  next();
};

/** After the validator, whether it let the request through or refused it: HEAD again. */
export const headAgain: [RequestHandler, ErrorRequestHandler] = [
  (req, _res, next) => {
    restore(req);
    next();
  },
  (error, req, _res, next) => {
    restore(req);
    next(error);
  },
];
