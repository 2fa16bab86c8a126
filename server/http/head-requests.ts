// HEAD, which every HTTP server must answer as it answers GET, without the body (RFC 9110 §9.1 and
// §9.3.2): the security layer and Express's routers take a HEAD for the path's GET already, but the
// contract documents GET operations only, so the validator answered every HEAD 405. It now sees
// the request as the GET it stands for, and the method is HEAD again after it: Express then sends
// the GET's status and headers, Content-Length included, and no body (Node drops it for a HEAD).
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';

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
