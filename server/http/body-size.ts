// What a request body says of its size, judged before anything reads it. The parsers (body-parser
// for JSON and forms, multer for multipart) read a body they refuse to its end before they answer,
// for as long as the client sends, up to the request timeout: a body announcing 10 GB was read for
// 30 s (re-attack review, 2026-11-24). And a body sent chunked says nothing of its size until it
// has all arrived; its framing is not even body bytes (a chunk size padded with a million leading
// zeros, chunk extensions), so counting what arrives bounds nothing: one request to the public
// token endpoint was read 11 GB deep, 23 s of CPU (re-attack review, 2026-11-25). So a body the
// sandbox reads must say its length (RFC 9112 §6.3 lets a server require it), and one that says it
// is over the limit is refused unread; closeWhenBodyUnread (unread-bodies.ts) then closes the
// connection rather than read the rest.
import type { Request, Response } from 'express';
import type { Server } from 'node:http';

/** An http-error as body-parser raises them (4xx, shown to the client); error-normalising.ts words it by `type`. */
export const bodyRefusal = (message: string, type: string, status = 400) => Object.assign(new Error(message), { status, expose: true, type });

/**
 * The refusal of a body that does not say its length, says it is over `limit` bytes, or is
 * compressed; undefined for one within it, or none. A compressed body (`Content-Encoding`) is
 * measured by the parser as it inflates it, after it was let in: 1 KB of gzip inflated to a 1 MiB
 * form of `+` cost ~200 ms of CPU at the public token endpoint (re-attack review, 2026-11-25). The
 * contract documents no compressed request, so none is read.
 */
function bodySizeRefusal(req: Request, limit: number): Error | undefined {
  const encoding = req.get('content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return bodyRefusal('content encoding unsupported', 'encoding.unsupported');
  const length = req.get('content-length');
  if (length === undefined) return req.get('transfer-encoding') === undefined ? undefined : bodyRefusal('length required', 'length.required');
  return Number(length) > limit ? bodyRefusal('request entity too large', 'entity.too.large', 413) : undefined;
}

/**
 * `bodySizeRefusal`, and for a body that passes, the `100 Continue` its client may be waiting for
 * (`Expect: 100-continue`): the server asks for a body only once it is about to read it
 * (askForBodiesWhenRead). A body refused, or never read (a path that names nothing, a credential
 * refused, a media type the operation does not take), gets its answer without one, so a client
 * that waits sends none of it.
 */
export function measuredBody(req: Request, res: Response, limit: number): Error | undefined {
  const refused = bodySizeRefusal(req, limit);
  if (!refused && /^100-continue$/i.test(req.get('expect')?.trim() ?? '')) res.writeContinue();
  return refused;
}

/**
 * Node answers `Expect: 100-continue` with `100 Continue` before any application code runs, which
 * invites a body the sandbox may refuse unread (second re-attack review, 2026-11-25): with a
 * `checkContinue` listener it does not, and the request goes to the app as any other.
 */
export function askForBodiesWhenRead(server: Server): void {
  server.on('checkContinue', (req, res) => server.emit('request', req, res));
}
