// A request target in absolute form (`GET http://host/path HTTP/1.1`, what a client sends to a
// proxy) is read as RFC 9112 §3.2.2 says a server must: the target's authority is the request's
// host (in place of Host) and its path and query are the target. Node passes the form through in
// req.url, where Express's req.path read the path and the validator's route lookup the whole URL,
// and the Host rule (local-host-names.ts) read the Host line only. Rewritten first, in origin form,
// so that every later rule reads one spelling: the path as sent, dot segments and all (no URL
// parser normalises it here).
import type { RequestHandler } from 'express';

const ABSOLUTE_FORM = /^https?:\/\/([^/?#@]*)([/?][^#]*)?$/i;

export const NOT_A_TARGET = 'The request target must be a path (/...), or an absolute http:// or https:// URL without user information.';

/** Answers 400 to a target that is neither a path nor an absolute http(s) URL (`*`, `example.com:443`, a userinfo). */
export const originFormTarget: RequestHandler = (req, res, next) => {
  if (req.url.startsWith('/')) return next();
  const absolute = ABSOLUTE_FORM.exec(req.url);
  if (!absolute || !absolute[1]) {
    res.status(400).type('text/plain').set('Cache-Control', 'no-store').set('Connection', 'close').send(NOT_A_TARGET);
    return;
  }
  const [, authority, rest = '/'] = absolute;
  req.headers.host = authority;
  req.url = rest.startsWith('?') ? `/${rest}` : rest;
  req.originalUrl = req.url;
  next();
};
