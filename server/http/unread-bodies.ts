// An answer given before the request's body was all received (a refusal of its size, its framing,
// where it comes from, its credentials, a path that names nothing, an operation that takes no body):
// Node would otherwise read the rest of the body and throw it away, to keep the connection for a
// next request, for as long as the client sends it, up to the request timeout (30 s). A refused
// 5 GB upload kept a CPU busy 4 s, a slow one held its connection 30 s, and a body sent to the key
// set was read 2 GB deep (re-attack reviews, 2026-11-24). Closing the connection after the answer
// stops the reading.
import type { RequestHandler } from 'express';

/**
 * Sets `Connection: close` on every answer whose request body has not all been received when the
 * answer's head is written (Node writes every head through `writeHead`, implicit ones included).
 */
export const closeWhenBodyUnread: RequestHandler = (req, res, next) => {
  const writeHead = res.writeHead;
  res.writeHead = function (this: typeof res, ...args: Parameters<typeof res.writeHead>) {
    if (!req.complete && !this.headersSent) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as typeof res.writeHead;
  next();
};
