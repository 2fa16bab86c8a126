// An answer given before the request's body was read (a refusal of its size, its framing, where it
// comes from, its credentials): Node would otherwise read the rest of the body and throw it away,
// to keep the connection for a next request, for as long as the client sends it, up to the request
// timeout (30 s). A refused 5 GB upload kept a CPU busy 4 s, a slow one held its connection 30 s
// (re-attack review, 2026-11-24). Closing the connection after the answer stops the reading.
import type { Request, Response } from 'express';

/** Sets `Connection: close` on the answer when the request's body has not all been received. */
export function closeIfBodyUnread(req: Request, res: Response): void {
  if (!req.complete) res.set('Connection', 'close');
}
