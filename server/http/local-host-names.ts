// DNS rebinding: a web page the developer visits can point its own name at 127.0.0.1 and then call a
// sandbox listening there from the page's origin, with the documented admin token (create sellers,
// read their notifications, rotate keys) and private notification URLs (make the sandbox POST into
// the developer's network). A browser sends that name in `Host`. So a sandbox that listens on this
// machine only answers requests addressed to it by a local name: `localhost` and its subdomains,
// a loopback address, its own HOST, or the host of PUBLIC_BASE_URL. Other listening addresses are
// reachable by others anyway (and need an admin token of their own: config.ts); they take any Host.
// On any address, a request with two Host lines is refused (RFC 9112, section 3.2).
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

export const MORE_THAN_ONE_HOST = 'The request has more than one Host header; HTTP/1.1 allows one (RFC 9112, section 3.2).';

/** How many Host header lines the request carries (Node keeps the first in `req.headers.host` and drops the others). */
const hostLines = (raw: string[]) => {
  let lines = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') lines++;
  return lines;
};

/**
 * Refuses a request with two Host header lines, whatever address the sandbox listens on: RFC 9112
 * (section 3.2) says a server MUST answer it 400. Node keeps the first and drops the others, so a
 * proxy in front that read the last would route the request by one name and the sandbox check another.
 * Then, when the sandbox listens on a loopback address, refuses a request whose Host is not a local name.
 */
export function localHostNamesOnly({ host, publicBaseUrl }: { host: string; publicBaseUrl: string }): RequestHandler {
  const own = isLoopback(host) ? new Set([hostName(host.includes(':') ? `[${host}]` : host), hostName(new URL(publicBaseUrl).host)]) : undefined;
  return (req, res, next) => {
    const refuse = (status: number, text: string) => void res.status(status).type('text/plain').set('Cache-Control', 'no-store').send(text);
    if (hostLines(req.rawHeaders) > 1) return refuse(400, MORE_THAN_ONE_HOST);
    const header = req.headers.host;
    // HTTP/1.0 without Host: no browser sends it, and Node refuses an HTTP/1.1 request without one.
    if (!own || header === undefined || isLocalName(hostName(header), own)) return next();
    refuse(403, WRONG_HOST);
  };
}
