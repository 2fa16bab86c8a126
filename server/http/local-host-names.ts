// DNS rebinding: a web page the developer visits can point its own name at 127.0.0.1 and then call a
// sandbox listening there from the page's origin, with the documented admin token (create sellers,
// read their notifications, rotate keys) and private notification URLs (make the sandbox POST into
// the developer's network). A browser sends that name in `Host`. So a sandbox that listens on this
// machine only answers requests addressed to it by a local name: `localhost` and its subdomains,
// a loopback address, its own HOST, or the host of PUBLIC_BASE_URL. Other listening addresses are
// reachable by others anyway (and need an admin token of their own: config.ts); they take any Host.
import type { RequestHandler } from 'express';
import { isLoopback } from '../config.ts';

/**
 * `Host` without its port, lower case, an IPv6 literal without brackets; an empty name for a
 * bracketed value followed by anything but a port (`[::1]evil.example`), which no browser sends.
 */
function hostName(header: string): string {
  const host = header.trim().toLowerCase();
  if (host.startsWith('[')) {
    const literal = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
    return literal ? literal[1]! : '';
  }
  return host.replace(/:\d*$/, '').replace(/\.$/, '');
}

/** Whether `name` (a Host header's name) is one this machine alone answers for. */
const isLocalName = (name: string, own: ReadonlySet<string>) => own.has(name) || name.endsWith('.localhost') || isLoopback(name);

export const WRONG_HOST =
  'This sandbox listens on this machine only and answers requests addressed to it by a local name (localhost, 127.0.0.1, [::1]) ' +
  'or by the host of PUBLIC_BASE_URL. Another name in Host is refused: a web page could point its own name at this machine (DNS rebinding).';

/** Refuses a request whose Host is not a local name, when the sandbox listens on a loopback address. */
export function localHostNamesOnly({ host, publicBaseUrl }: { host: string; publicBaseUrl: string }): RequestHandler {
  if (!isLoopback(host)) return (_req, _res, next) => next();
  const own = new Set([hostName(host.includes(':') ? `[${host}]` : host), hostName(new URL(publicBaseUrl).host)]);
  return (req, res, next) => {
    const header = req.headers.host;
    // HTTP/1.0 without Host: no browser sends it, and Node refuses an HTTP/1.1 request without one.
    if (header === undefined || isLocalName(hostName(header), own)) return next();
    res.status(403).type('text/plain').set('Cache-Control', 'no-store').send(WRONG_HOST);
  };
}
