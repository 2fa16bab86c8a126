// A request target in absolute form (`GET http://host/path HTTP/1.1`, what a client sends to a
// proxy) is read as RFC 9112 §3.2.2 says a server must: the target's authority is the request's
// host (in place of Host) and its path and query are the target. Node passes the form through in
// req.url, where Express's req.path read the path and the validator's route lookup the whole URL,
// and the Host rule (local-host-names.ts) read the Host line only. Rewritten in origin form before
// Express's router sees the request (it works out, once, how much of the URL precedes the path, and
// cuts that much from the path of every mounted middleware), so that every rule reads one spelling:
// the path as sent, dot segments and all (no URL parser normalises it here).
import type { IncomingMessage } from 'node:http';
import type { Express, RequestHandler } from 'express';

const ABSOLUTE_FORM = /^https?:\/\/([^/?#@]+)([/?][^#]*)?$/i;

export const NOT_A_TARGET = 'The request target must be a path (/...), or an absolute http:// or https:// URL without user information.';

/** Marks a request `refuseNonTargets` refuses (its `originalUrl`, which the log records, is the target as sent). */
const REFUSED = Symbol('request target refused');

/** An authority a URL parser takes whole (`[::1]evil.example` is not one). */
function isAuthority(authority: string): boolean {
  try {
    return new URL(`http://${authority}/`).host !== '';
  } catch {
    return false;
  }
}

/** In origin form; a target that is neither a path nor an absolute http(s) URL is marked for `refuseNonTargets`, and routed as `/`. */
function toOriginForm(req: IncomingMessage & { originalUrl?: string; [REFUSED]?: string }): void {
  const target = req.url ?? '/';
  if (target.startsWith('/')) return;
  const absolute = ABSOLUTE_FORM.exec(target);
  if (absolute && isAuthority(absolute[1]!)) {
    const [, authority, rest = '/'] = absolute;
    req.headers.host = authority;
    req.url = rest.startsWith('?') ? `/${rest}` : rest;
    req.originalUrl = req.url;
  } else {
    req[REFUSED] = target;
    req.url = '/';
    req.originalUrl = target;
  }
}

/** Every request of `app` in origin form before its router runs (Express calls `app.handle` for each). */
export function originFormFirst(app: Express): void {
  const owned = app as Express & { handle: (req: IncomingMessage, res: unknown, callback?: unknown) => void };
  const handle = owned.handle.bind(app);
  owned.handle = (req, res, callback) => {
    toOriginForm(req);
    handle(req, res, callback);
  };
}

/** Answers 400 to a target that was neither a path nor an absolute http(s) URL (`*`, a userinfo, an authority no URL has). */
export const refuseNonTargets: RequestHandler = (req, res, next) => {
  if ((req as { [REFUSED]?: string })[REFUSED] === undefined) return next();
  res.status(400).type('text/plain').set('Cache-Control', 'no-store').set('Connection', 'close').send(NOT_A_TARGET);
};
